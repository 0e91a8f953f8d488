#include "models/cpu_allocator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace dgcn {
namespace {

TEST(CpuAllocator, ReusesLargeBlocksAndLeavesSmallOnesAlone) {
  install_caching_cpu_allocator(size_t{64} << 20);
  const auto before = cpu_allocator_stats();
  ASSERT_TRUE(before.installed);
  void* first = nullptr;
  {
    auto t = torch::empty({3 << 20}, torch::kFloat);  // 12 MiB
    first = t.data_ptr();
    t.fill_(1.0f);
  }
  {
    // Slightly smaller: served by the block just freed.
    auto t = torch::ones({(3 << 20) - 1000}, torch::kFloat);
    EXPECT_EQ(t.data_ptr(), first);
    EXPECT_EQ(t.sum().item<float>(), static_cast<float>((3 << 20) - 1000));
  }
  {
    // Much smaller (under a quarter less): a new block, not the 12 MiB one.
    auto t = torch::empty({1 << 20}, torch::kFloat);
    EXPECT_NE(t.data_ptr(), first);
  }
  auto small = torch::empty({100}, torch::kFloat);  // delegated to the default allocator
  const auto after = cpu_allocator_stats();
  EXPECT_EQ(after.large_allocations - before.large_allocations, 3);
  EXPECT_EQ(after.reused - before.reused, 1);
  EXPECT_LE(after.cached_bytes, int64_t{64} << 20);
  // A cap of zero unmaps every cached block.
  install_caching_cpu_allocator(0);
  EXPECT_EQ(cpu_allocator_stats().cached_bytes, 0);
  install_caching_cpu_allocator(size_t{64} << 20);
}

// A request no free block fits enlarges the largest smaller one (at least
// half its size): only the difference is newly mapped, and all of it is
// writable memory.
TEST(CpuAllocator, GrowsASmallerFreeBlockInsteadOfMappingASecond) {
  install_caching_cpu_allocator(0);  // nothing cached from earlier tests
  install_caching_cpu_allocator(size_t{64} << 20);
  { torch::empty({10 << 18}, torch::kFloat).fill_(1.0f); }  // 10 MiB, freed into the cache
  const auto before = cpu_allocator_stats();
  EXPECT_EQ(before.cached_bytes, int64_t{10} << 20);
  {
    auto t = torch::empty({14 << 18}, torch::kFloat);  // 14 MiB
    const auto during = cpu_allocator_stats();
    EXPECT_EQ(during.grown - before.grown, 1);
    EXPECT_EQ(during.mapped_bytes - before.mapped_bytes, int64_t{4} << 20);
    EXPECT_EQ(during.cached_bytes, 0);
    EXPECT_GE(during.peak_mapped_bytes, during.mapped_bytes);
    t.fill_(2.0f);
    EXPECT_EQ(t.sum().item<double>(), 2.0 * (14 << 18));
  }
  {
    // Under half of the request: a block of its own.
    auto t = torch::empty({40 << 18}, torch::kFloat);
    EXPECT_EQ(cpu_allocator_stats().grown - before.grown, 1);
    EXPECT_EQ(cpu_allocator_stats().cached_bytes, int64_t{14} << 20);
  }
  install_caching_cpu_allocator(0);
  install_caching_cpu_allocator(size_t{64} << 20);
}

// oneDNN takes its scratchpads with raw_allocate / raw_deallocate (the bf16
// GEMM does, Note [Mixed precision] in models/gcn.h): large and small.
TEST(CpuAllocator, ServesRawAllocations) {
  install_caching_cpu_allocator(size_t{64} << 20);
  c10::Allocator* a = c10::GetAllocator(c10::DeviceType::CPU);
  const auto before = cpu_allocator_stats();
  void* large = a->raw_allocate(size_t{12} << 20);
  static_cast<char*>(large)[0] = 1;
  a->raw_deallocate(large);
  void* small = a->raw_allocate(100);
  static_cast<char*>(small)[99] = 1;
  a->raw_deallocate(small);
  void* again = a->raw_allocate(size_t{12} << 20);
  EXPECT_EQ(again, large) << "the freed large block is reused";
  a->raw_deallocate(again);
  EXPECT_EQ(cpu_allocator_stats().reused - before.reused, 1);
  // A bf16 matrix product through oneDNN.
  const auto x = torch::rand({3000, 100}).to(torch::kBFloat16);
  const auto w = torch::rand({100, 128}).to(torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(torch::mm(x, w).to(torch::kFloat),
                              torch::mm(x.to(torch::kFloat), w.to(torch::kFloat)), 0.02, 0.5));
}

}  // namespace
}  // namespace dgcn
