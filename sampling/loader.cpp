// See Note [Loader flow control] in loader.h.
#include "sampling/loader.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/buffer.h"
#include "base/error.h"
#include "base/timing.h"
#include "sampling/gather.h"

namespace dgcn {

NeighborLoader::NeighborLoader(const GraphStore& store, LoaderOptions options, BatchAllocator allocator,
                               BatchProducer* producer)
    : store_(store),
      options_(std::move(options)),
      own_pool_(allocator ? nullptr
                          : BatchMemoryPool::create(options_.queue_depth + options_.num_workers + 1)),
      allocator_(allocator ? std::move(allocator) : own_pool_->allocator()),
      producer_(producer),
      label_bytes_(store.label_bytes()) {
  check_sampler_options(options_.sampler, "loader");
  DGCN_CHECK(options_.num_workers >= 1, "loader: num_workers = {}, expected >= 1", options_.num_workers);
  DGCN_CHECK(
      !producer_ || !producer_->ordered() || options_.num_workers == 1,
      "loader: this batch producer makes batches in order (collectives across ranks); it needs 1 worker, "
      "not {}",
      options_.num_workers);
  DGCN_CHECK(options_.queue_depth >= 1, "loader: queue_depth = {}, expected >= 1", options_.queue_depth);
  slots_.resize(options_.queue_depth);
  workers_.reserve(options_.num_workers);
  for (int w = 0; w < options_.num_workers; ++w) workers_.emplace_back([this] { work(); });
}

NeighborLoader::~NeighborLoader() {
  {
    MutexLock lock(&mutex_);
    stop_ = true;
  }
  work_cv_.signal_all();
  ready_cv_.signal_all();
  for (auto& t : workers_) t.join();
}

std::vector<std::optional<NeighborLoader::Slot>> NeighborLoader::abandon_locked() {
  ++generation_;
  std::vector<std::optional<Slot>> dropped(slots_.size());
  std::swap(dropped, slots_);
  if (plan_) next_claim_ = next_hand_out_ = plan_->num_batches;
  return dropped;
}

void NeighborLoader::start_epoch(EpochPlan plan, int64_t first_batch) {
  DGCN_CHECK(first_batch >= 0 && first_batch <= plan.num_batches,
             "loader: first batch {} is outside the epoch's [0, {}] batches", first_batch, plan.num_batches);
  auto next_plan = std::make_shared<const EpochPlan>(std::move(plan));
  std::vector<std::optional<Slot>> dropped;
  {
    MutexLock lock(&mutex_);
    dropped = abandon_locked();
    plan_ = std::move(next_plan);
    next_claim_ = next_hand_out_ = first_batch;
  }
  work_cv_.signal_all();
}

std::optional<LoadedBatch> NeighborLoader::next() {
  Slot taken;
  std::vector<std::optional<Slot>> dropped;  // destroyed after the lock is released
  {
    MutexLock lock(&mutex_);
    if (!plan_ || next_hand_out_ >= plan_->num_batches) return std::nullopt;
    const int64_t b = next_hand_out_;
    auto& slot = slots_[b % options_.queue_depth];
    if (!slot) {
      const auto t0 = std::chrono::steady_clock::now();
      while (!slot) ready_cv_.wait();
      stats_.consumer_wait_s += seconds_since(t0);
    }
    taken = std::move(*slot);
    slot.reset();
    ++next_hand_out_;
    if (taken.error) {
      dropped = abandon_locked();
    } else {
      ++stats_.batches;
    }
  }
  work_cv_.signal_all();
  if (taken.error) std::rethrow_exception(taken.error);
  return std::move(taken.batch);
}

void NeighborLoader::recycle(LoadedBatch&& batch) {
  batch.lease.reset();  // outside the lock: it may call into the caller's allocator
  MutexLock lock(&mutex_);
  if (spare_.size() < static_cast<size_t>(options_.queue_depth + options_.num_workers)) {
    spare_.push_back(std::move(batch.sample));
  }
}

LoaderStats NeighborLoader::stats() const {
  LoaderStats s;
  {
    MutexLock lock(&mutex_);
    s = stats_;
  }
  if (own_pool_) s.buffers_created = static_cast<int64_t>(own_pool_->buffers_created());
  return s;
}

void NeighborLoader::work() {
  SamplerScratch scratch;  // this worker's, reused for every batch
  // Explicit lock/unlock: the lock is dropped while a batch is produced.
  mutex_.lock();
  for (;;) {
    if (!stop_ && !can_claim_locked()) {
      const bool blocked = has_work_locked();  // work left, but the window is full
      const auto t0 = std::chrono::steady_clock::now();
      while (!stop_ && !can_claim_locked()) work_cv_.wait();
      if (blocked) stats_.worker_blocked_s += seconds_since(t0);
    }
    if (stop_) break;
    const int64_t b = next_claim_++;
    const uint64_t generation = generation_;
    std::shared_ptr<const EpochPlan> plan = plan_;
    SampledBatch reuse;
    if (!spare_.empty()) {
      reuse = std::move(spare_.back());
      spare_.pop_back();
    }
    stats_.peak_in_flight = std::max(stats_.peak_in_flight, next_claim_ - next_hand_out_);
    mutex_.unlock();

    Slot result;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      result.batch = produce(*plan, b, scratch, std::move(reuse));
    } catch (const std::exception& e) {
      result.error = std::make_exception_ptr(
          Error(fmt::format("loader: batch {} of epoch {}: {}", b, plan->epoch, e.what())));
    } catch (...) {
      result.error = std::make_exception_ptr(
          Error(fmt::format("loader: batch {} of epoch {}: unknown exception", b, plan->epoch)));
    }
    const double busy = seconds_since(t0);

    mutex_.lock();
    stats_.worker_busy_s += busy;
    if (generation != generation_) {
      // The epoch was abandoned meanwhile: drop the batch outside the lock
      // (its lease may call back into the caller's allocator).
      mutex_.unlock();
      result = Slot{};
      mutex_.lock();
      continue;
    }
    slots_[b % options_.queue_depth] = std::move(result);
    ready_cv_.signal_all();
  }
  mutex_.unlock();
}

bool NeighborLoader::has_work_locked() const {
  return plan_ && next_claim_ < plan_->num_batches;
}

bool NeighborLoader::can_claim_locked() const {
  return has_work_locked() && next_claim_ - next_hand_out_ < options_.queue_depth;
}

LoadedBatch NeighborLoader::produce(const EpochPlan& plan, int64_t b, SamplerScratch& scratch,
                                    SampledBatch&& reuse) const {
  LoadedBatch out;
  out.sample = std::move(reuse);
  if (producer_) {
    producer_->produce(plan, b, allocator_, out);
    return out;
  }
  sample_neighbors(store_.graph, plan.batch(b), options_.sampler, plan.key(b), scratch, out.sample);
  out.sample.index = b;
  if (!options_.gather) return out;

  const auto rows = static_cast<int64_t>(out.sample.n_id.size());
  const int64_t f = options_.gather_features ? store_.num_features : 0;
  BatchMemory memory = allocator_(rows, f, out.sample.num_seeds, label_bytes_);
  DGCN_CHECK(static_cast<int64_t>(memory.features.size()) >= rows * f,
             "loader: the batch allocator gave {} floats for features, need {} rows x {} features",
             memory.features.size(), rows, f);
  DGCN_CHECK(static_cast<int64_t>(memory.labels.size()) >= out.sample.num_seeds * label_bytes_,
             "loader: the batch allocator gave {} bytes for labels, need {} seeds x {} bytes",
             memory.labels.size(), out.sample.num_seeds, label_bytes_);
  gather(out.sample, memory);
  out.features = memory.features.first(rows * f);
  out.labels = memory.labels.first(out.sample.num_seeds * label_bytes_);
  out.lease = std::move(memory.lease);
  return out;
}

void NeighborLoader::gather(const SampledBatch& sample, const BatchMemory& memory) const {
  const std::span<const int64_t> n_id(sample.n_id);
  if (options_.gather_features && store_.num_features > 0) {
    gather_float_rows(store_.features.as<float>().data(), store_.num_features, n_id, memory.features.data(),
                      options_.sampler.num_threads);
  }
  gather_byte_rows(store_.labels.data(), label_bytes_, n_id.first(sample.num_seeds), memory.labels.data());
}

}  // namespace dgcn
