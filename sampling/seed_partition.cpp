#include "sampling/seed_partition.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "base/random.h"

namespace dgcn {

namespace {
// Separates the shuffle's stream from the sampler's (seed, epoch, batch, ...) streams.
constexpr uint64_t kShuffleStream = 0x5eed5ca77e4ULL;
}  // namespace

std::span<const int64_t> EpochPlan::batch(int64_t b) const {
  DGCN_CHECK(b >= 0 && b < num_batches, "epoch plan: batch {} out of range [0, {})", b, num_batches);
  if (!bounds.empty()) {
    return std::span<const int64_t>(seeds).subspan(
        static_cast<size_t>(bounds[static_cast<size_t>(b)]),
        static_cast<size_t>(bounds[static_cast<size_t>(b) + 1] - bounds[static_cast<size_t>(b)]));
  }
  const int64_t begin = b * batch_size;
  const int64_t end = std::min<int64_t>(begin + batch_size, static_cast<int64_t>(seeds.size()));
  return std::span<const int64_t>(seeds).subspan(begin, end - begin);
}

BatchKey EpochPlan::key(int64_t b) const {
  return BatchKey{seed, epoch, b * world_size + rank};
}

std::vector<int64_t> epoch_shuffle(std::span<const int64_t> items, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(items.begin(), items.end());
  Rng rng(stream_key(seed, {kShuffleStream, static_cast<uint64_t>(epoch)}));
  // Fisher-Yates with our own generator: the same order with every standard
  // library (std::shuffle's algorithm is unspecified).
  for (auto i = static_cast<int64_t>(order.size()) - 1; i > 0; --i) {
    std::swap(order[i], order[static_cast<int64_t>(rng.below(static_cast<uint64_t>(i + 1)))]);
  }
  return order;
}

EpochPlan plan_local_epoch(std::span<const int64_t> nodes, int64_t num_batches, const ShardOptions& o) {
  DGCN_CHECK(o.world_size >= 1 && o.rank >= 0 && o.rank < o.world_size,
             "plan_local_epoch: rank = {} is not in [0, world_size = {})", o.rank, o.world_size);
  const auto n = static_cast<int64_t>(nodes.size());
  DGCN_CHECK(num_batches >= 1 && num_batches <= n,
             "plan_local_epoch: {} seed nodes for {} batches; every batch needs at least one seed", n,
             num_batches);
  EpochPlan plan;
  plan.seed = o.seed;
  plan.epoch = o.epoch;
  plan.rank = o.rank;
  plan.world_size = o.world_size;
  plan.batch_size = (n + num_batches - 1) / num_batches;
  // The rank is part of the shuffle's key: each rank orders its own nodes.
  plan.seeds = o.shuffle ? epoch_shuffle(nodes, stream_key(o.seed, {static_cast<uint64_t>(o.rank)}), o.epoch)
                         : std::vector<int64_t>(nodes.begin(), nodes.end());
  plan.num_batches = num_batches;
  for (int64_t b = 0; b <= num_batches; ++b) plan.bounds.push_back(n * b / num_batches);
  return plan;
}

EpochPlan plan_epoch(std::span<const int64_t> nodes, const ShardOptions& o) {
  DGCN_CHECK(o.world_size >= 1, "plan_epoch: world_size = {}, expected >= 1", o.world_size);
  DGCN_CHECK(o.rank >= 0 && o.rank < o.world_size, "plan_epoch: rank = {} is not in [0, world_size = {})",
             o.rank, o.world_size);
  DGCN_CHECK(o.batch_size >= 1, "plan_epoch: batch_size = {}, expected >= 1", o.batch_size);
  EpochPlan plan;
  plan.seed = o.seed;
  plan.epoch = o.epoch;
  plan.rank = o.rank;
  plan.world_size = o.world_size;
  plan.batch_size = o.batch_size;

  const auto n = static_cast<int64_t>(nodes.size());
  DGCN_CHECK(n == 0 || n >= o.world_size,
             "plan_epoch: {} seed nodes for {} ranks; every rank needs at least one (train on fewer ranks)",
             n, o.world_size);
  const int64_t per_rank = (n + o.world_size - 1) / o.world_size;
  const int64_t padded = per_rank * o.world_size;
  // Every rank orders all nodes the same way, pads, then keeps its own slice.
  // The shuffle moves positions as it would move the nodes (it never reads
  // them), so the order is the same and each seed's position comes with it.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (o.shuffle) order = epoch_shuffle(order, o.seed, o.epoch);
  for (int64_t i = n; i < padded; ++i) order.push_back(order[static_cast<size_t>(i - n)]);
  const int64_t begin = per_rank * o.rank;
  plan.num_batches = o.drop_last ? per_rank / o.batch_size : (per_rank + o.batch_size - 1) / o.batch_size;
  plan.positions.assign(order.begin() + begin,
                        order.begin() + begin + std::min<int64_t>(per_rank, plan.num_batches * o.batch_size));
  plan.seeds.resize(plan.positions.size());
  for (size_t i = 0; i < plan.positions.size(); ++i)
    plan.seeds[i] = nodes[static_cast<size_t>(plan.positions[i])];
  plan.repeated = padded - n;
  plan.dropped = (per_rank - static_cast<int64_t>(plan.seeds.size())) * o.world_size;
  return plan;
}

}  // namespace dgcn
