// Which seeds every epoch of a run trains, and in how many batches: the
// store's training nodes, or on a partitioned graph those of every part
// (SeedMode::kGlobal) or of this rank's own part (SeedMode::kLocal); see
// Note [Partitioned training] in train/gcn_trainer.h.
//
//   TrainingSeeds seeds = TrainingSeeds::of_store(store, shard);
//   EpochPlan plan = seeds.plan(epoch);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph_store.h"
#include "partition/collectives.h"
#include "partition/part_map.h"
#include "sampling/seed_partition.h"

namespace dgcn {

// Which seeds each rank trains on a partitioned graph (Note [Partitioned
// training]).
enum class SeedMode {
  kGlobal,  // the seeds a replicated run gives this rank: the same batches, bit for bit
  kLocal,   // this rank's part's own training nodes: fewer rows to fetch from other ranks
};
const char* seed_mode_name(SeedMode mode);          // "global", "local"
SeedMode parse_seed_mode(const std::string& name);  // inverse; dgcn::Error otherwise
// The one rule for a seed mode: it picks seeds per rank on a partitioned
// graph, so the data must be a partition folder (`data_path`; "" is the
// synthetic preset). Returns why it does not fit, or "" when it does.
// dgcn-train says the reason as a usage error before it starts;
// run_train_job as an error on every rank.
std::string seed_mode_misfit(const std::string& data_path);

class TrainingSeeds {
 public:
  // A whole graph: its training nodes, sharded over the ranks of `shard`
  // (seed, rank, world size, batch size; the epoch is plan()'s). Throws
  // dgcn::Error when it has none, or none with a label.
  static TrainingSeeds of_store(const GraphStore& store, const ShardOptions& shard);
  // Collective over `comm`, rank r holding part r: the ranks agree on the
  // training nodes (every part's with kGlobal) and, with kLocal, on the
  // batch count of every rank (the largest part's at the batch size).
  // Throws dgcn::Error on every rank when no part has a labelled training
  // node, and on a rank whose part has fewer training nodes than batches.
  static TrainingSeeds of_parts(const GraphStore& part, const PartMap& map, Collectives& comm, SeedMode mode,
                                const ShardOptions& shard);

  // This rank's plan of epoch index `epoch` (sampling/seed_partition.h).
  EpochPlan plan(int64_t epoch) const;
  // Whether the loss must be the mean over the labelled seeds of all ranks
  // together (Note [Unlabelled nodes]): some training node has no label, or
  // the ranks' batches differ in size (kLocal).
  bool union_mean_loss() const { return union_mean_loss_; }

 private:
  std::vector<int64_t> nodes_;  // what epochs are planned over
  ShardOptions shard_;
  int64_t local_batches_ = 0;  // kLocal: batches per epoch on every rank; 0 otherwise
  bool union_mean_loss_ = false;
};

}  // namespace dgcn
