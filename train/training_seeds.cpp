#include "train/training_seeds.h"

#include <algorithm>

#include "base/error.h"
#include "partition/partition_files.h"

namespace dgcn {

const char* seed_mode_name(SeedMode mode) {
  return mode == SeedMode::kLocal ? "local" : "global";
}

SeedMode parse_seed_mode(const std::string& name) {
  if (name == "global") return SeedMode::kGlobal;
  if (name == "local") return SeedMode::kLocal;
  throw Error(fmt::format("seeds '{}' is unknown (choose global or local)", name));
}

std::string seed_mode_misfit(const std::string& data_path) {
  if (!data_path.empty() && is_partition_dir(data_path)) return "";
  return fmt::format(
      "seeds are chosen per rank on a partitioned graph (--data DIR from dgcn-prep partition); {} is not one",
      data_path.empty() ? "the synthetic preset" : data_path);
}

TrainingSeeds TrainingSeeds::of_store(const GraphStore& store, const ShardOptions& shard) {
  DGCN_CHECK(!store.train_nodes().empty(), "train: the store has no training nodes");
  TrainingSeeds s;
  s.shard_ = shard;
  s.nodes_.assign(store.train_nodes().begin(), store.train_nodes().end());
  if (store.task == Task::kSingleLabel) {
    const auto unlabelled =
        std::count_if(s.nodes_.begin(), s.nodes_.end(), [&](int64_t v) { return store.label(v) < 0; });
    DGCN_CHECK(unlabelled < static_cast<int64_t>(s.nodes_.size()),
               "train: none of the {} training nodes has a label", s.nodes_.size());
    s.union_mean_loss_ = unlabelled > 0;
  }
  return s;
}

TrainingSeeds TrainingSeeds::of_parts(const GraphStore& part, const PartMap& map, Collectives& comm,
                                      SeedMode mode, const ShardOptions& shard) {
  const auto own = part.train_nodes();
  int64_t unlabelled = 0;
  if (part.task == Task::kSingleLabel) {
    for (int64_t v : own) unlabelled += part.label(map.row(v)) < 0;
  }
  // Per rank: its training nodes and how many lack a label.
  double total = 0, total_unlabelled = 0, largest = 0;
  for (const auto& rank_counts : all_gather(
           comm, std::vector<double>{static_cast<double>(own.size()), static_cast<double>(unlabelled)})) {
    total += rank_counts[0];
    total_unlabelled += rank_counts[1];
    largest = std::max(largest, rank_counts[0]);
  }
  DGCN_CHECK(total > 0, "train: no part has a training node");
  DGCN_CHECK(total_unlabelled < total, "train: none of the {} training nodes has a label", total);
  TrainingSeeds s;
  s.shard_ = shard;
  s.union_mean_loss_ = total_unlabelled > 0 || mode == SeedMode::kLocal;
  if (mode == SeedMode::kGlobal) {
    // Every part's training nodes, in id order: the list a replicated run plans over.
    for (const auto& part_nodes : all_gather(comm, own)) {
      s.nodes_.insert(s.nodes_.end(), part_nodes.begin(), part_nodes.end());
    }
    std::sort(s.nodes_.begin(), s.nodes_.end());
  } else {
    s.nodes_.assign(own.begin(), own.end());
    s.local_batches_ = (static_cast<int64_t>(largest) + shard.batch_size - 1) / shard.batch_size;
    DGCN_CHECK(
        static_cast<int64_t>(own.size()) >= s.local_batches_,
        "train: with --seeds local every rank runs {} batches (the largest part's {} training nodes at "
        "batch size {}), but part {} has only {} training nodes; use --seeds global or a larger batch size",
        s.local_batches_, static_cast<int64_t>(largest), shard.batch_size, part.part.index, own.size());
  }
  return s;
}

EpochPlan TrainingSeeds::plan(int64_t epoch) const {
  ShardOptions shard = shard_;
  shard.epoch = epoch;
  if (local_batches_ > 0) return plan_local_epoch(nodes_, local_batches_, shard);
  return plan_epoch(nodes_, shard);
}

}  // namespace dgcn
