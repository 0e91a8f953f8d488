// Neighbour sampling and feature fetch on a partitioned graph: each rank
// holds one part (GraphPart) and the batches come out exactly as
// sample_neighbors on the whole graph would make them.
//
// Note [Partitioned sampling]
// A batch is sampled hop by hop by the rank that trains it. At hop h its
// frontier (the nodes first reached at hop h) goes to the nodes' owners
// (partition/owner_exchange.h, Note [Asking the owners]: its own share
// included), each owner draws the picks of the nodes it was sent from their
// own streams (Note [Per-node draws]: the picks depend on (key, h, node)
// only, so it does not matter which rank draws them) and sends them back in
// a second all-to-all. The requester walks its frontier in order, takes each
// row's picks from its owner's answer and relabels them by first appearance,
// exactly as the whole-graph sampler does: the same n_id, the same blocks.
// The batch's rows (features, degree, label) then come from their owners the
// same way: ids out, rows back.
//
// Every rank samples one batch of its own at a time, in step with the
// others: the collectives match by order, so all ranks call sample() and
// fetch() the same number of times (equal batch counts per epoch, which
// sampling/seed_partition.h guarantees). Per batch and rank: 2 all-to-alls
// per hop and 2 for the rows.
//
//   PartitionedSampler s(part, map, comm, {.fanouts = {15, 10, 5}});
//   s.sample(plan.batch(b), plan.key(b), batch);          // collective
//   s.fetch(batch, features, labels);                     // collective
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/mutex.h"
#include "graph/graph_store.h"
#include "partition/collectives.h"
#include "partition/owner_exchange.h"
#include "partition/part_map.h"
#include "sampling/cpu/row_picks.h"
#include "sampling/loader.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

// Bytes this rank sent to other ranks (its own share not counted) and time
// spent in the all-to-alls, summed since construction.
struct ExchangeCounters {
  int64_t id_bytes = 0;       // node ids asked for (sampling and rows)
  int64_t pick_bytes = 0;     // sampled neighbours sent back
  int64_t feature_bytes = 0;  // feature rows, degrees, labels sent back
  int64_t exchanges = 0;
  double seconds = 0;  // inside exchange(): waiting for peers and moving bytes
};

class PartitionedSampler {
 public:
  // `part` and `map` describe this rank's part; comm.rank() must be the
  // part's index and comm.size() the part count. All must outlive this.
  PartitionedSampler(const GraphStore& part, const PartMap& map, Collectives& comm, SamplerOptions options);

  // Collective: samples the batch of `seeds` (whole-graph ids) with `key`
  // into `out`, equal to sample_neighbors on the whole graph. Throws
  // dgcn::Error on bad seeds or options, and when a peer's message is
  // malformed.
  void sample(std::span<const int64_t> seeds, const BatchKey& key, SampledBatch& out);

  // Collective: the rows of out.n_id from their owners: features into
  // `features` ([n_id.size() x num_features]; may be empty when no features
  // are wanted), the seeds' labels into `labels` (num_seeds x label_bytes),
  // each node's full-graph degree into batch.degrees.
  void fetch(SampledBatch& batch, std::span<float> features, std::span<std::byte> labels);

  const ExchangeCounters& counters() const { return counters_; }
  int64_t label_bytes() const { return label_bytes_; }

 private:
  void add(const RoundTripCost& cost, int64_t& answer_counter);
  void serve_picks(int peer, std::span<const int64_t> header, std::span<const int64_t> ids, int hop,
                   Messages& answers);
  void serve_rows(std::span<const int64_t> header, std::span<const int64_t> ids, Messages& answers) const;

  const GraphStore& part_;
  const PartMap& map_;
  Collectives& comm_;
  const SamplerOptions options_;
  const int64_t label_bytes_;
  ExchangeCounters counters_;

  // Reused across batches (capacity kept).
  OwnerRoundTrip round_trip_;
  OwnerGroups groups_;
  std::vector<int32_t> local_of_;  // global id -> id in the batch being sampled, -1 elsewhere
  std::vector<int64_t> positions_;
  detail::RowMarks marks_;
};

// A loader batch producer over a partitioned graph: sample() and fetch()
// of each batch of the plan in turn (loader.h's BatchProducer; the loader
// runs it on one worker, so every rank issues its collectives in order).
class PartitionedBatchProducer final : public BatchProducer {
 public:
  PartitionedBatchProducer(const GraphStore& part, const PartMap& map, Collectives& comm,
                           SamplerOptions options, bool gather_features);
  void produce(const EpochPlan& plan, int64_t b, const BatchAllocator& allocate, LoadedBatch& out) override;
  bool ordered() const override { return true; }
  // The sampler's counters after the last batch made; any thread.
  ExchangeCounters counters() const;

 private:
  PartitionedSampler sampler_;  // used by the loader's one worker only
  const bool gather_features_;
  const int64_t num_features_;
  mutable Mutex mutex_;
  ExchangeCounters published_ GUARDED_BY(mutex_);
};

}  // namespace dgcn
