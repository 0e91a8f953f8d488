// Memory for the rows the loader gathers per batch (features, seed labels),
// and a pool that recycles it. Fresh memory is expensive here: first touch of
// a 4 KiB page costs a page fault (measured ~20 us on our shared VMs, so a
// products-scale batch of 200 MB would spend longer faulting than gathering),
// hence the pool, and new buffers whose pages arrive at once (FreshPages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/buffer.h"
#include "base/mutex.h"

namespace dgcn {

// Memory for one batch's gathered rows. `lease` keeps it alive (or returns it
// to its pool) until the batch is dropped, so a torch-side allocator can hand
// out pinned host tensors and wrap the batch without a copy.
struct BatchMemory {
  std::span<float> features;    // at least rows x num_features floats
  std::span<std::byte> labels;  // at least num_seeds x label_bytes bytes
  std::shared_ptr<void> lease;
};

// Called from loader worker threads, possibly concurrently: must be
// thread-safe. It may block (e.g. on a fixed pool of pinned slots), which
// stalls that worker until the consumer drops a batch.
using BatchAllocator =
    std::function<BatchMemory(int64_t rows, int64_t num_features, int64_t num_seeds, int64_t label_bytes)>;

// Plain 64-byte aligned host memory, fresh on every call.
BatchMemory allocate_batch_memory(int64_t rows, int64_t num_features, int64_t num_seeds, int64_t label_bytes);

// How a pool's new buffer of several MiB gets its pages.
enum class FreshPages {
  kHuge,       // transparent huge pages, faulted in as the buffer is written
  kPopulated,  // 4 KiB pages mapped at once (Note [Populated batch pages])
};

// Keeps the buffers of dropped batches (at most `max_free` of them) and hands
// them out again; new buffers get 25% headroom, so batches of varying size
// reuse them, and large ones get their pages as `pages` says. Thread-safe. A
// lease that outlives the pool frees its buffer.
class BatchMemoryPool : public std::enable_shared_from_this<BatchMemoryPool> {
 public:
  static std::shared_ptr<BatchMemoryPool> create(size_t max_free, FreshPages pages = FreshPages::kHuge);

  BatchMemory acquire(int64_t rows, int64_t num_features, int64_t num_seeds, int64_t label_bytes);
  // An allocator that acquires from this pool (and keeps the pool alive).
  BatchAllocator allocator();

  size_t buffers_created() const;  // fresh allocations so far

 private:
  BatchMemoryPool(size_t max_free, FreshPages pages) : max_free_(max_free), pages_(pages) {}
  void give_back(MutableBuffer buffer);

  const size_t max_free_;
  const FreshPages pages_;
  mutable Mutex mutex_;
  std::vector<MutableBuffer> free_ GUARDED_BY(mutex_);
  size_t created_ GUARDED_BY(mutex_) = 0;
};

// An owned allocation of `bytes` bytes aligned to 2 MiB and advised for
// transparent huge pages (MADV_HUGEPAGE; a no-op where THP is off).
MutableBuffer allocate_huge_page_buffer(size_t bytes);

// An owned allocation of `bytes` bytes in 4 KiB pages (MADV_NOHUGEPAGE), whose
// first `populate_bytes` (all by default) are mapped before it returns where
// the kernel can (MADV_POPULATE_WRITE, Linux 5.14+; before, and past
// populate_bytes, pages fault in as written).
MutableBuffer allocate_populated_buffer(size_t bytes, size_t populate_bytes = SIZE_MAX);

}  // namespace dgcn
