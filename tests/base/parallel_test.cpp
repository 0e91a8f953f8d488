#include "base/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/digest.h"
#include "base/error.h"

namespace dgcn {
namespace {

TEST(Parallel, CoversRangeExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<int> hits(1001, 0);
    parallel_for(1001, threads, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int h : hits) ASSERT_EQ(h, 1);
    std::vector<int> chunk_hits(1001, 0);
    parallel_for_chunks(1001, 17, threads, [&](int64_t b, int64_t e) {
      EXPECT_EQ(b % 17, 0);
      for (int64_t i = b; i < e; ++i) chunk_hits[i]++;
    });
    for (int h : chunk_hits) ASSERT_EQ(h, 1);
  }
}

TEST(Parallel, RethrowsWorkerException) {
  EXPECT_THROW(parallel_for(100, 4,
                            [](int64_t b, int64_t, int) {
                              if (b > 0) throw std::runtime_error("boom");
                            }),
               std::runtime_error);
  EXPECT_THROW(parallel_for_chunks(100, 3, 2,
                                   [](int64_t b, int64_t) {
                                     if (b == 51) throw Error("chunk 17");
                                   }),
               Error);
}

// One rule for the readers (one process) and the binaries (ranks sharing a
// machine): the request, else DGCN_NUM_THREADS, else the cores shared.
TEST(Parallel, ResolveThreadsTakesTheRequestThenTheEnvironmentThenSharesTheCores) {
  const char* saved = std::getenv("DGCN_NUM_THREADS");
  const std::string saved_value = saved ? saved : "";
  ::unsetenv("DGCN_NUM_THREADS");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(resolve_threads(3), 3);
  EXPECT_EQ(resolve_threads(3, 64), 3);
  EXPECT_EQ(resolve_threads(0), cores);
  EXPECT_EQ(resolve_threads(0, 2), std::max(1, cores / 2));
  EXPECT_EQ(resolve_threads(0, 1 << 20), 1) << "never zero threads";
  ::setenv("DGCN_NUM_THREADS", "5", 1);
  EXPECT_EQ(resolve_threads(0, 4), 5) << "the environment is per process, not shared";
  EXPECT_EQ(resolve_threads(2, 4), 2);
  if (saved) {
    ::setenv("DGCN_NUM_THREADS", saved_value.c_str(), 1);
  } else {
    ::unsetenv("DGCN_NUM_THREADS");
  }
}

TEST(Digest, StreamingEqualsOneShotAndSeesChanges) {
  std::vector<int32_t> v = {1, 2, 3, 4, 5};
  Digest a;
  a.update(std::span<const int32_t>(v).first(2));
  a.update(std::span<const int32_t>(v).subspan(2));
  EXPECT_EQ(a.value(), hash_bytes(v.data(), v.size() * 4));
  v[4] = 6;
  EXPECT_NE(a.value(), hash_bytes(v.data(), v.size() * 4));
  EXPECT_EQ(a.hex().size(), 16u);
}

}  // namespace
}  // namespace dgcn
