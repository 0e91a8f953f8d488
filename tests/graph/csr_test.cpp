#include "graph/csr.h"

#include <gtest/gtest.h>

#include <vector>

namespace dgcn {
namespace {

Csr make(int64_t n, std::vector<int64_t> indptr, std::vector<int32_t> indices) {
  return Csr(n, Buffer::from_vector(std::move(indptr)), Buffer::from_vector(std::move(indices)), IdWidth::k32,
             "test csr");
}

TEST(Csr, AcceptsValidGraphAndReportsDegrees) {
  Csr g = make(4, {0, 2, 4, 7, 8}, {1, 2, 0, 2, 0, 1, 3, 2});
  EXPECT_EQ(g.num_nodes(), 4);
  EXPECT_EQ(g.num_edges(), 8);
  EXPECT_EQ(g.degree(2), 3);
  EXPECT_EQ(g.indices<int32_t>()[6], 3);
  EXPECT_THROW(g.indices<int64_t>(), Error);
  int64_t sum = g.visit_indices([](auto ids) {
    int64_t s = 0;
    for (auto v : ids) s += v;
    return s;
  });
  EXPECT_EQ(sum, 11);
}

TEST(Csr, RejectsBrokenInvariantsWithNamedValues) {
  auto message_of = [](auto&& build) -> std::string {
    try {
      build();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  {
    std::string m = message_of([] { make(2, {0, 2, 1}, {1, 0}); });
    EXPECT_NE(m.find("test csr"), std::string::npos) << m;
    EXPECT_NE(m.find("indptr[2] = 1"), std::string::npos) << m;
  }
  EXPECT_NE(message_of([] { make(2, {0, 2, 1, 2}, {1, 0}); }).find("indptr has"), std::string::npos);
  EXPECT_NE(message_of([] { make(2, {1, 1, 2}, {1, 0}); }).find("indptr[0] = 1"), std::string::npos);
  EXPECT_NE(message_of([] { make(3, {0, 2, 1, 2}, {1, 0}); }).find("not monotone"), std::string::npos);
  std::string m = message_of([] { make(2, {0, 1, 2}, {1, 7}); });
  EXPECT_NE(m.find("indices[1] = 7"), std::string::npos) << m;
  EXPECT_NE(message_of([] { make(2, {0, 1, 2}, {-1, 0}); }).find("indices[0] = -1"), std::string::npos);
}

TEST(Csr, IdWidthFollowsNodeCount) {
  EXPECT_EQ(id_width_for(5), IdWidth::k32);
  EXPECT_EQ(id_width_for(INT32_MAX), IdWidth::k32);
  EXPECT_EQ(id_width_for(int64_t{INT32_MAX} + 1), IdWidth::k64);
}

}  // namespace
}  // namespace dgcn
