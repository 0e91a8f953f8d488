#include "sampling/gather.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/random.h"
#include "sampling/batch_memory.h"

namespace dgcn {
namespace {

TEST(Gather, CopiesTheRowsOfTheIdsForAnyWidthAndThreadCount) {
  for (int64_t cols : {1, 3, 4, 100}) {
    const int64_t n = 300;
    std::vector<float> src(n * cols);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f;
    std::vector<int64_t> ids(20000);
    Rng rng(cols);
    for (auto& id : ids) id = static_cast<int64_t>(rng.below(n));
    for (int threads : {1, 3}) {
      // Aligned (streaming stores) and misaligned destinations.
      BatchMemory m = allocate_batch_memory(static_cast<int64_t>(ids.size()) + 1, cols, 0, 0);
      for (float* dst : {m.features.data(), m.features.data() + 1}) {
        gather_float_rows(src.data(), cols, ids, dst, threads);
        for (size_t i = 0; i < ids.size(); ++i) {
          for (int64_t c = 0; c < cols; ++c) {
            ASSERT_EQ(dst[i * cols + c], src[ids[i] * cols + c]) << "row " << i << " col " << c;
          }
        }
      }
    }
  }
  std::vector<std::byte> labels = {std::byte{1}, std::byte{2}, std::byte{3},
                                   std::byte{4}, std::byte{5}, std::byte{6}};
  std::vector<int64_t> ids = {2, 0};
  std::vector<std::byte> out(4);
  gather_byte_rows(labels.data(), 2, ids, out.data());
  EXPECT_EQ(out, (std::vector<std::byte>{std::byte{5}, std::byte{6}, std::byte{1}, std::byte{2}}));
}

}  // namespace
}  // namespace dgcn
