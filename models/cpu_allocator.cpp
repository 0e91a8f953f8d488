#include "models/cpu_allocator.h"

#include "base/mutex.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

namespace dgcn {
namespace {

// Requests below this go to LibTorch's default allocator (glibc's heap serves
// them from memory it already has).
constexpr size_t kMinCachedBytes = size_t{1} << 20;
// Block sizes are rounded up to this, so a freed block fits requests a
// little larger than the one it was made for.
constexpr size_t kBlockRounding = size_t{2} << 20;

// Note [Fresh block pages]
// The first batches of every process make the cache's blocks (later ones
// reuse them), and on our VMs how a new page first arrives decides how long
// those batches take. A free 2 MiB block of the guest has usually been
// handed back to the host (virtio-balloon free page reporting), so a
// transparent huge page costs ~12 ms to back anew, 600 MB about 4 s; 4 KiB
// pages come first from the guest's smaller free blocks, which stay backed,
// and MAP_POPULATE maps them in one call instead of one fault each (~10 us a
// fault on another VM of ours). So a new block is populated 4 KiB pages, not
// MADV_HUGEPAGE. And a request no free block fits grows the largest smaller
// one (mremap) where that is at least half the request: a batch's tensors
// are a little larger or smaller than the last batch's, and growing makes
// only the difference new memory rather than a second block beside the
// first. dgcn-train on products, 2 ranks, 2 epochs of 20 batches: the
// first epoch took 11.4-11.8 s with huge pages against 5.1-5.2 s for the
// second; populated, 5.4 s; growing, rank 0's blocks peak at 323 MB instead
// of 537 MB. The second epoch is the same either way (hidden-layer SpMMs
// read activation rows at random, a small part of a batch).

struct LargeBlock {
  void* data;
  size_t bytes;
};

class CachingCpuAllocator final : public c10::Allocator {
 public:
  explicit CachingCpuAllocator(c10::Allocator* fallback) : fallback_(fallback) {}

  // c10::Allocator::allocate is const in LibTorch < 2.3 and non-const since;
  // declaring both overrides whichever the installed version has.
  c10::DataPtr allocate(size_t n) const { return const_cast<CachingCpuAllocator*>(this)->allocate_impl(n); }
  c10::DataPtr allocate(size_t n) { return allocate_impl(n); }
  // Pure virtual in newer LibTorch; a plain member in older ones.
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }

  void set_cap(size_t bytes) {
    MutexLock lock(&mutex_);
    cap_ = bytes;
    trim_locked();
  }

  CpuAllocatorStats stats() {
    MutexLock lock(&mutex_);
    return {true,
            large_allocations_,
            reused_,
            grown_,
            static_cast<int64_t>(mapped_),
            static_cast<int64_t>(peak_mapped_),
            static_cast<int64_t>(cached_)};
  }

  static CachingCpuAllocator*& instance() {
    static CachingCpuAllocator* a = nullptr;  // never destroyed: tensors may outlive main
    return a;
  }

 private:
  // raw_allocate/raw_deallocate (oneDNN's scratchpads, e.g. in bf16 GEMMs)
  // need a DataPtr whose context is its data and a raw deleter: large blocks
  // are found again by their address (in_use_), other pointers go back to
  // the fallback allocator they came from.
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  c10::DataPtr allocate_impl(size_t n) {
    if (n < kMinCachedBytes) return fallback_->allocate(n);
    LargeBlock* block = take(n);
    return {block->data, block->data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  LargeBlock* take(size_t n) {
    const size_t bytes = (n + kBlockRounding - 1) / kBlockRounding * kBlockRounding;
    LargeBlock* smaller = nullptr;
    {
      MutexLock lock(&mutex_);
      ++large_allocations_;
      // Best fit no larger than n + n/4 (+ one rounding step).
      auto it = free_.lower_bound(n);
      if (it != free_.end() && it->first <= n + n / 4 + kBlockRounding) {
        LargeBlock* b = it->second;
        free_.erase(it);
        cached_ -= b->bytes;
        ++reused_;
        in_use_.emplace(b->data, b);
        return b;
      }
      // Else the largest free block below n, if it is at least half of n,
      // is grown: only the difference is fresh memory (Note [Fresh block pages]).
      if (it != free_.begin() && std::prev(it)->first >= n / 2) {
        smaller = std::prev(it)->second;
        free_.erase(std::prev(it));
        cached_ -= smaller->bytes;
      }
    }
    if (smaller != nullptr) {
      if (LargeBlock* b = grow(smaller, bytes)) return b;
    }
    // Populated at once, in 4 KiB pages: Note [Fresh block pages].
    constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, kFlags, -1, 0);
    if (p == MAP_FAILED) {
      // Memory is short: give back what the cache holds and try once more.
      set_cap_temporarily_zero();
      p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, kFlags, -1, 0);
      TORCH_CHECK(p != MAP_FAILED, "CPU allocator: out of memory allocating ", n, " bytes");
    }
    MutexLock lock(&mutex_);
    return hand_out_locked(new LargeBlock{p, bytes}, bytes);
  }

  // `block`, `added` bytes of it newly mapped, counted and marked in use.
  LargeBlock* hand_out_locked(LargeBlock* block, size_t added) EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    mapped_ += added;
    peak_mapped_ = std::max(peak_mapped_, mapped_);
    in_use_.emplace(block->data, block);
    return block;
  }

  // `block`, taken off the free list, enlarged to `bytes` in use; nullptr
  // (the block unmapped) when the kernel cannot move it.
  LargeBlock* grow(LargeBlock* block, size_t bytes) {
    void* p = mremap(block->data, block->bytes, bytes, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
      munmap(block->data, block->bytes);
      MutexLock lock(&mutex_);
      mapped_ -= block->bytes;
      delete block;
      return nullptr;
    }
    // A hint: on kernels before 5.14 the new pages fault in as they are written.
    madvise(static_cast<char*>(p) + block->bytes, bytes - block->bytes, MADV_POPULATE_WRITE);
    const size_t added = bytes - block->bytes;
    block->data = p;
    block->bytes = bytes;
    MutexLock lock(&mutex_);
    ++grown_;
    return hand_out_locked(block, added);
  }

  static void release(void* data) {
    CachingCpuAllocator* self = instance();
    MutexLock lock(&self->mutex_);
    const auto it = self->in_use_.find(data);
    if (it == self->in_use_.end()) {
      // A small block raw_allocate took from the fallback allocator.
      self->fallback_->raw_deleter()(data);
      return;
    }
    LargeBlock* block = it->second;
    self->in_use_.erase(it);
    self->free_.emplace(block->bytes, block);
    self->cached_ += block->bytes;
    self->trim_locked();
  }

  void set_cap_temporarily_zero() {
    MutexLock lock(&mutex_);
    const size_t cap = cap_;
    cap_ = 0;
    trim_locked();
    cap_ = cap;
  }

  void trim_locked() EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    while (cached_ > cap_ && !free_.empty()) {
      auto it = std::prev(free_.end());  // the largest
      LargeBlock* b = it->second;
      free_.erase(it);
      cached_ -= b->bytes;
      mapped_ -= b->bytes;
      munmap(b->data, b->bytes);
      delete b;
    }
  }

  c10::Allocator* fallback_;
  Mutex mutex_;
  std::multimap<size_t, LargeBlock*> free_ GUARDED_BY(mutex_);
  std::unordered_map<void*, LargeBlock*> in_use_ GUARDED_BY(mutex_);  // by data address
  size_t cap_ GUARDED_BY(mutex_) = 0;
  size_t cached_ GUARDED_BY(mutex_) = 0;
  size_t mapped_ GUARDED_BY(mutex_) = 0;
  size_t peak_mapped_ GUARDED_BY(mutex_) = 0;
  int64_t large_allocations_ GUARDED_BY(mutex_) = 0;
  int64_t reused_ GUARDED_BY(mutex_) = 0;
  int64_t grown_ GUARDED_BY(mutex_) = 0;
};

}  // namespace

void install_caching_cpu_allocator(size_t max_cached_bytes) {
  static std::once_flag once;
  std::call_once(once, [] {
    CachingCpuAllocator::instance() = new CachingCpuAllocator(c10::GetDefaultCPUAllocator());
    c10::SetCPUAllocator(CachingCpuAllocator::instance(), /*priority=*/100);
  });
  CachingCpuAllocator::instance()->set_cap(max_cached_bytes);
}

bool caching_cpu_allocator_installed() {
  return CachingCpuAllocator::instance() != nullptr;
}

CpuAllocatorStats cpu_allocator_stats() {
  CachingCpuAllocator* a = CachingCpuAllocator::instance();
  return a ? a->stats() : CpuAllocatorStats{};
}

}  // namespace dgcn
