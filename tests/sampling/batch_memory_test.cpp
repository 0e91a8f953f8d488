#include "sampling/batch_memory.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <thread>
#include <vector>

#include "base/parallel.h"

namespace dgcn {
namespace {

TEST(BatchMemory, LayoutHoldsFeaturesAndLabelsApart) {
  for (auto m : {allocate_batch_memory(7, 3, 2, 4), BatchMemoryPool::create(2)->acquire(7, 3, 2, 4)}) {
    ASSERT_EQ(m.features.size(), 21u);
    ASSERT_EQ(m.labels.size(), 8u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.features.data()) % 64, 0u);
    EXPECT_GE(reinterpret_cast<const std::byte*>(m.labels.data()),
              reinterpret_cast<const std::byte*>(m.features.data() + m.features.size()));
    std::fill(m.features.begin(), m.features.end(), 1.5f);
    std::fill(m.labels.begin(), m.labels.end(), std::byte{7});
    EXPECT_EQ(m.features.back(), 1.5f);
  }
}

TEST(BatchMemory, PoolReusesReturnedBuffers) {
  auto pool = BatchMemoryPool::create(3);
  for (int round = 0; round < 50; ++round) {
    // Three batches alive at once, of varying size (within the 25% headroom).
    std::vector<BatchMemory> live;
    for (int i = 0; i < 3; ++i) live.push_back(pool->acquire(1000 - (round % 7) * 20, 16, 10, 4));
  }
  EXPECT_EQ(pool->buffers_created(), 3u);
  // A bigger batch needs a new buffer; afterwards the pool keeps the larger ones.
  { auto big = pool->acquire(5000, 16, 10, 4); }
  EXPECT_EQ(pool->buffers_created(), 4u);
  { auto big = pool->acquire(5000, 16, 10, 4); }
  EXPECT_EQ(pool->buffers_created(), 4u);
}

TEST(BatchMemory, PopulatedPoolHandsOutWritableReusedBuffers) {
  // 8 MiB: past the two huge pages below which a pool takes plain memory.
  auto pool = BatchMemoryPool::create(2, FreshPages::kPopulated);
  for (int round = 0; round < 3; ++round) {
    BatchMemory m = pool->acquire(1 << 20, 2, 3, 4);
    ASSERT_EQ(m.features.size(), size_t{2} << 20);
    std::fill(m.features.begin(), m.features.end(), static_cast<float>(round));
    EXPECT_EQ(m.features.back(), static_cast<float>(round));
    std::fill(m.labels.begin(), m.labels.end(), std::byte{1});
  }
  EXPECT_EQ(pool->buffers_created(), 1u);
  MutableBuffer b = allocate_populated_buffer(3 << 20);
  ASSERT_EQ(b.size(), size_t{3} << 20);
  std::fill(b.data(), b.data() + b.size(), std::byte{9});
  EXPECT_EQ(b.data()[b.size() - 1], std::byte{9});
}

// Resident pages among the first `pages` 4 KiB pages at `p` (mincore).
size_t resident_pages(const void* p, size_t pages) {
  std::vector<unsigned char> in_core(pages);
  if (mincore(const_cast<void*>(p), pages * 4096, in_core.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

TEST(BatchMemory, PopulatedBufferMapsOnlyThePagesAskedFor) {
  // 64 pages, the first 10 (and a part of the 11th) populated: the rest stay
  // unmapped until written, so a pool's headroom costs no fresh page.
  MutableBuffer b = allocate_populated_buffer(64 * 4096, 10 * 4096 + 100);
  ASSERT_EQ(b.size(), 64u * 4096);
  const size_t before = resident_pages(b.data(), 64);
  if (before == 0)
    GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported (Linux < 5.14): pages fault in as written";
  EXPECT_EQ(before, 11u);
  std::fill(b.data(), b.data() + b.size(), std::byte{3});  // the rest is writable
  EXPECT_EQ(resident_pages(b.data(), 64), 64u);
  EXPECT_EQ(b.data()[b.size() - 1], std::byte{3});
}

TEST(BatchMemory, LeaseOutlivesPoolAndConcurrentUseIsSafe) {
  BatchMemory kept;
  {
    auto pool = BatchMemoryPool::create(4);
    BatchAllocator alloc = pool->allocator();
    parallel_for(8, 8, [&](int64_t, int64_t, int t) {
      for (int i = 0; i < 200; ++i) {
        BatchMemory m = alloc(100 + t, 8, 5, 4);
        std::fill(m.features.begin(), m.features.end(), static_cast<float>(t));
        for (float x : m.features) ASSERT_EQ(x, static_cast<float>(t));
      }
    });
    kept = pool->acquire(10, 2, 1, 4);
  }
  std::fill(kept.features.begin(), kept.features.end(), 2.0f);  // still valid memory
  kept = BatchMemory{};
}

}  // namespace
}  // namespace dgcn
