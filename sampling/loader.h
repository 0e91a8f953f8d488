// A NeighborLoader: a persistent pool of worker threads samples the batches
// of an epoch ahead of the trainer into a bounded queue, gathers each batch's
// feature rows and seed labels into memory the caller provides, and hands
// the batches out in order.
//
//   NeighborLoader loader(store, {.sampler = {.fanouts = {15, 10, 5}}, .num_workers = 2});
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     loader.start_epoch(plan_epoch(store.train_nodes(), {.seed = 1, .epoch = epoch, ...}));
//     while (auto batch = loader.next()) {
//       train_step(*batch);                  // features: batch->features, labels: batch->labels
//       loader.recycle(std::move(*batch));   // optional: reuse its memory
//     }
//   }
//
// Zero-copy to torch: pass a BatchAllocator that hands out pinned host
// tensors' memory and keeps the tensors in BatchMemory::lease; the gathered
// rows land there directly.
//
// Note [Loader flow control]
// Batch b may be claimed by a worker only while b < handed_out + queue_depth,
// so at most queue_depth batches are being sampled or waiting at any time
// (their feature memory included); a finished batch waits in slot b %
// queue_depth until next() hands it out, which keeps the order even when
// batch b+1 finishes first. Workers wait on a condition variable when the
// window is full (counted as worker_blocked_s), the consumer when its batch
// is not ready (consumer_wait_s). Batches the caller still holds are not
// counted: memory in use is queue_depth + held batches (+ up to num_workers
// batches of an epoch abandoned by start_epoch, dropped when they finish).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "graph/graph_store.h"
#include "sampling/batch_memory.h"
#include "sampling/neighbor_sampler.h"
#include "sampling/sampled_batch.h"
#include "sampling/seed_partition.h"

namespace dgcn {

struct LoaderOptions {
  SamplerOptions sampler;  // fanouts, replace, threads inside one batch
  int num_workers = 1;     // threads sampling whole batches side by side
  int queue_depth = 4;     // batches sampled ahead of the consumer (>= 1)
  bool gather = true;      // gather features and labels (false: sample only)
  // With gather: false gathers the seed labels only, LoadedBatch::features
  // stays empty and the consumer reads feature rows from the store itself
  // (Note [Input gather] in train/gcn_trainer.h).
  bool gather_features = true;
};

struct LoadedBatch {
  SampledBatch sample;
  // Row i holds the features of sample.n_id[i]: [n_id.size() x num_features]
  // (empty when LoaderOptions::gather_features is false).
  std::span<float> features;
  // One row per seed: an int32 class id (single-label task) or
  // label_row_bytes() bits (multi-label task); empty for Task::kNone.
  std::span<std::byte> labels;
  std::shared_ptr<void> lease;  // keeps features and labels alive
};

struct LoaderStats {
  double consumer_wait_s = 0;   // time next() waited for a batch that was not ready
  double worker_blocked_s = 0;  // time workers with batches left waited for room (summed over workers)
  double worker_busy_s = 0;     // time workers spent sampling and gathering (summed)
  int64_t batches = 0;          // batches handed out by next(), all epochs
  int64_t peak_in_flight = 0;   // most batches claimed but not yet handed out; <= queue_depth
  // Fresh buffers the loader's own batch memory pool made, all epochs (0 with
  // a caller's allocator): about queue_depth plus the batches the consumer
  // holds at once (Note [Loader flow control]), more where a batch outgrows
  // every free buffer.
  int64_t buffers_created = 0;
};

// How a worker makes batch b of a plan, when not by sampling the loader's
// own store: e.g. a partitioned graph's batches, sampled with the other
// ranks (sampling/partitioned_sampler.h). `out.sample` arrives holding a
// recycled batch whose vectors may be reused.
class BatchProducer {
 public:
  virtual ~BatchProducer() = default;
  virtual void produce(const EpochPlan& plan, int64_t b, const BatchAllocator& allocate,
                       LoadedBatch& out) = 0;
  // True when batches must be made one at a time in plan order (collectives
  // across ranks): the loader then runs one worker.
  virtual bool ordered() const { return false; }
};

class NeighborLoader {
 public:
  // Starts the workers. `store` must outlive the loader. Without an
  // allocator, batches get memory from a BatchMemoryPool sized for the queue.
  // A `producer` (outliving the loader) makes the batches instead of the
  // loader's own sampling of `store`; an ordered() one needs num_workers 1.
  // Throws dgcn::Error on invalid options.
  NeighborLoader(const GraphStore& store, LoaderOptions options, BatchAllocator allocator = nullptr,
                 BatchProducer* producer = nullptr);
  // Stops the workers, also mid-epoch: a worker finishes the batch it is
  // sampling, which is dropped. Never waits on the consumer.
  ~NeighborLoader();
  NeighborLoader(const NeighborLoader&) = delete;
  NeighborLoader& operator=(const NeighborLoader&) = delete;

  // Begins producing the batches of `plan` from batch `first_batch` on (a
  // resumed epoch: batch b is the same batch whatever came before, since it
  // is keyed by plan.key(b)); an unfinished earlier epoch is abandoned (its
  // batches are dropped). Call from the consumer thread.
  void start_epoch(EpochPlan plan, int64_t first_batch = 0);

  // The next batch of the epoch in order, or nullopt when the epoch is done.
  // When producing batch b failed, throws dgcn::Error "loader: batch b of
  // epoch e: <the worker's message>" and abandons the rest of the epoch (then
  // returns nullopt until the next start_epoch). Call from one thread.
  std::optional<LoadedBatch> next();

  // Gives a handed-out batch back when the caller is done with it: its
  // sample's vectors are reused for a later batch (a products-scale batch
  // holds ~10 MB of them; fresh memory costs a page fault per 4 KiB), and its
  // lease is dropped. Optional: a batch not given back is simply freed. Any
  // thread.
  void recycle(LoadedBatch&& batch);

  LoaderStats stats() const;
  // Bytes per seed in LoadedBatch::labels (4 for single-label, the bit row
  // for multi-label, 0 without labels).
  int64_t label_bytes() const { return label_bytes_; }

 private:
  struct Slot {
    LoadedBatch batch;
    std::exception_ptr error;
  };

  void work();
  LoadedBatch produce(const EpochPlan& plan, int64_t b, SamplerScratch& scratch, SampledBatch&& reuse) const;
  void gather(const SampledBatch& sample, const BatchMemory& memory) const;
  // Drops the current epoch's batches; returns the slots to destroy unlocked.
  std::vector<std::optional<Slot>> abandon_locked() EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool has_work_locked() const EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool can_claim_locked() const EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const GraphStore& store_;
  const LoaderOptions options_;
  const std::shared_ptr<BatchMemoryPool> own_pool_;  // without a caller's allocator; else null
  const BatchAllocator allocator_;
  BatchProducer* const producer_;  // nullptr: produce() samples store_
  const int64_t label_bytes_;

  mutable Mutex mutex_;
  CondVar work_cv_{&mutex_};   // workers: a batch to claim, or stop
  CondVar ready_cv_{&mutex_};  // consumer: its batch is ready
  bool stop_ GUARDED_BY(mutex_) = false;
  // Bumped by start_epoch / abandon; older results are dropped.
  uint64_t generation_ GUARDED_BY(mutex_) = 0;
  std::shared_ptr<const EpochPlan> plan_ GUARDED_BY(mutex_);
  int64_t next_claim_ GUARDED_BY(mutex_) = 0;
  int64_t next_hand_out_ GUARDED_BY(mutex_) = 0;
  // Batch b waits in slots_[b % queue_depth].
  std::vector<std::optional<Slot>> slots_ GUARDED_BY(mutex_);
  // Recycled batches, at most queue_depth + num_workers.
  std::vector<SampledBatch> spare_ GUARDED_BY(mutex_);
  LoaderStats stats_ GUARDED_BY(mutex_);

  std::vector<std::thread> workers_;  // started by the constructor, joined by the destructor
};

}  // namespace dgcn
