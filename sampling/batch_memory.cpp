#include "sampling/batch_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

#include "base/error.h"

namespace dgcn {

// Note [Populated batch pages]
// A fresh transparent huge page costs ~15 ms to back on our VMs, 4 KiB pages
// far less (models/cpu_allocator.cpp's Note [Fresh block pages]): touching
// 400 MB after 8 s idle took 3.2 s as huge pages, 0.18 s as populated 4 KiB
// pages. Buffers written in sequence, such as a batch's index arrays, lose
// nothing to the smaller pages. A new pool buffer populates only the bytes
// its batch writes: its headroom for larger batches faults in if one comes.

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kAlign = 64;

size_t round_up(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

BatchMemory carve(const MutableBuffer& buffer, int64_t rows, int64_t num_features, int64_t num_seeds,
                  int64_t label_bytes) {
  std::byte* base = buffer.data();
  const size_t feature_bytes = static_cast<size_t>(rows * num_features) * sizeof(float);
  BatchMemory m;
  m.features = std::span<float>(reinterpret_cast<float*>(base), static_cast<size_t>(rows * num_features));
  m.labels = std::span<std::byte>(base + round_up(feature_bytes, kAlign),
                                  static_cast<size_t>(num_seeds * label_bytes));
  return m;
}

size_t bytes_needed(int64_t rows, int64_t num_features, int64_t num_seeds, int64_t label_bytes) {
  DGCN_CHECK(rows >= 0 && num_features >= 0 && num_seeds >= 0 && label_bytes >= 0,
             "batch memory: negative size (rows {}, features {}, seeds {}, label bytes {})", rows,
             num_features, num_seeds, label_bytes);
  return round_up(static_cast<size_t>(rows * num_features) * sizeof(float), kAlign) +
         static_cast<size_t>(num_seeds * label_bytes);
}

}  // namespace

MutableBuffer allocate_huge_page_buffer(size_t bytes) {
  if (bytes == 0) return MutableBuffer();
  const size_t rounded = round_up(bytes, kHugePage);
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw Error(fmt::format("batch memory: cannot allocate {} bytes", bytes));
  madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
  std::shared_ptr<void> owner(p, [](void* q) { std::free(q); });
  return MutableBuffer::wrap(owner, p, bytes);
}

MutableBuffer allocate_populated_buffer(size_t bytes, size_t populate_bytes) {
  if (bytes == 0) return MutableBuffer();
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Error(fmt::format("batch memory: cannot map {} bytes", bytes));
  madvise(p, bytes, MADV_NOHUGEPAGE);  // 4 KiB pages even where THP is "always"
  // A hint, as in the CPU cache's grow(): before Linux 5.14 the pages fault
  // in as they are written.
  constexpr size_t kPage = 4096;
  const size_t populate = std::min(bytes, round_up(std::min(populate_bytes, bytes), kPage));
  if (populate > 0) madvise(p, populate, MADV_POPULATE_WRITE);
  std::shared_ptr<void> owner(p, [bytes](void* q) { munmap(q, bytes); });
  return MutableBuffer::wrap(owner, p, bytes);
}

BatchMemory allocate_batch_memory(int64_t rows, int64_t num_features, int64_t num_seeds,
                                  int64_t label_bytes) {
  auto buffer = std::make_shared<MutableBuffer>(
      Buffer::allocate(bytes_needed(rows, num_features, num_seeds, label_bytes)));
  BatchMemory m = carve(*buffer, rows, num_features, num_seeds, label_bytes);
  m.lease = std::move(buffer);
  return m;
}

std::shared_ptr<BatchMemoryPool> BatchMemoryPool::create(size_t max_free, FreshPages pages) {
  return std::shared_ptr<BatchMemoryPool>(new BatchMemoryPool(max_free, pages));
}

BatchMemory BatchMemoryPool::acquire(int64_t rows, int64_t num_features, int64_t num_seeds,
                                     int64_t label_bytes) {
  const size_t need = bytes_needed(rows, num_features, num_seeds, label_bytes);
  MutableBuffer buffer;
  {
    MutexLock lock(&mutex_);
    // The smallest free buffer that fits.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->size() >= need && (best == free_.end() || it->size() < best->size())) best = it;
    }
    if (best != free_.end()) {
      buffer = std::move(*best);
      free_.erase(best);
    } else {
      ++created_;
    }
  }
  if (buffer.empty() && need > 0) {
    // Either kind only pays off for buffers of several huge pages.
    const size_t bytes = need + need / 4;
    if (bytes < 2 * kHugePage) {
      buffer = Buffer::allocate(bytes);
    } else if (pages_ == FreshPages::kHuge) {
      buffer = allocate_huge_page_buffer(bytes);
    } else {
      // Only the pages this batch writes are populated: the headroom is
      // fresh memory (Note [Populated batch pages]) that a larger batch
      // may never need.
      buffer = allocate_populated_buffer(bytes, need);
    }
  }
  BatchMemory m = carve(buffer, rows, num_features, num_seeds, label_bytes);
  std::weak_ptr<BatchMemoryPool> pool = weak_from_this();
  auto holder = std::make_shared<MutableBuffer>(std::move(buffer));
  // The lease returns the buffer when the last copy of it is dropped.
  m.lease = std::shared_ptr<void>(holder.get(), [holder, pool](void*) mutable {
    if (auto p = pool.lock()) p->give_back(std::move(*holder));
    holder.reset();
  });
  return m;
}

void BatchMemoryPool::give_back(MutableBuffer buffer) {
  if (buffer.empty()) return;
  MutexLock lock(&mutex_);
  if (free_.size() < max_free_) {
    free_.push_back(std::move(buffer));
    return;
  }
  // Full: keep the larger buffers, they fit more batches.
  auto smallest =
      std::min_element(free_.begin(), free_.end(),
                       [](const MutableBuffer& a, const MutableBuffer& b) { return a.size() < b.size(); });
  if (smallest != free_.end() && smallest->size() < buffer.size()) *smallest = std::move(buffer);
}

BatchAllocator BatchMemoryPool::allocator() {
  std::shared_ptr<BatchMemoryPool> self = shared_from_this();
  return [self](int64_t rows, int64_t f, int64_t seeds, int64_t label_bytes) {
    return self->acquire(rows, f, seeds, label_bytes);
  };
}

size_t BatchMemoryPool::buffers_created() const {
  MutexLock lock(&mutex_);
  return created_;
}

}  // namespace dgcn
