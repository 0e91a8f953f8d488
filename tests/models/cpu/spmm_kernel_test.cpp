#include "models/cpu/spmm_kernel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace dgcn::cpu {
namespace {

// A random CSR with some empty rows and repeated columns.
template <class Index>
struct RandomCsr {
  std::vector<int64_t> indptr{0};
  std::vector<Index> indices;
  std::vector<float> values;
  int64_t rows, cols;
  RandomCsr(int64_t r, int64_t c, uint64_t seed) : rows(r), cols(c) {
    std::mt19937_64 rng(seed);
    for (int64_t i = 0; i < r; ++i) {
      const int64_t k = rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % 9);
      for (int64_t t = 0; t < k; ++t) {
        indices.push_back(static_cast<Index>(rng() % c));
        values.push_back(static_cast<float>(rng() % 1000) / 250.0f - 2.0f);
      }
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
  }
  CsrRef<Index> ref() const { return {rows, cols, indptr.data(), indices.data(), values.data()}; }
};

std::vector<float> random_dense(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<float>(rng() % 2000) / 500.0f - 2.0f;
  return v;
}

// y = a x in double, dense and obviously right.
template <class Index>
std::vector<double> reference(const RandomCsr<Index>& a, const std::vector<float>& x, int64_t f) {
  std::vector<double> y(static_cast<size_t>(a.rows * f), 0.0);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t e = a.indptr[r]; e < a.indptr[r + 1]; ++e)
      for (int64_t j = 0; j < f; ++j) y[r * f + j] += double(a.values[e]) * x[a.indices[e] * f + j];
  return y;
}

template <class Index>
void check_against_reference(int64_t f) {
  RandomCsr<Index> a(200, 150, 7 + f);
  const auto x = random_dense(a.cols * f, 11);
  const auto want = reference(a, x, f);
  // Split the rows in several ways: results must be identical bit for bit.
  std::vector<float> first;
  for (int64_t parts : {1, 3, 16}) {
    std::vector<float> y(static_cast<size_t>(a.rows * f), 123.0f);  // garbage: every row must be written
    const auto splits = balanced_row_splits(a.indptr.data(), a.rows, parts);
    for (int64_t p = 0; p < parts; ++p)
      spmm_rows(a.ref(), x.data(), f, y.data(), f, f, splits[p], splits[p + 1]);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-4) << "f " << f << " entry " << i;
    if (first.empty()) {
      first = y;
    } else {
      ASSERT_EQ(first, y) << "split into " << parts << " parts changed the result";
    }
  }
}

TEST(SpmmKernel, MatchesDenseReferenceForManyWidths) {
  // Widths around the vector lengths (8, 16) and the real ones (47, 100, 128).
  for (int64_t f : {1, 7, 8, 16, 17, 47, 100, 128, 129, 200, 256}) {
    check_against_reference<int32_t>(f);
    check_against_reference<int64_t>(f);
  }
}

TEST(SpmmKernel, HeaderExample) {
  std::vector<int64_t> indptr{0, 1, 3};
  std::vector<int32_t> indices{1, 0, 2};
  std::vector<float> values{2, 1, 3};
  std::vector<float> x{1, 1, 2, 2, 3, 3}, y(4);
  CsrRef<int32_t> a{2, 3, indptr.data(), indices.data(), values.data()};
  spmm_rows(a, x.data(), 2, y.data(), 2, 2, 0, 2);
  EXPECT_EQ(y, (std::vector<float>{4, 4, 10, 10}));
  // Without values every weight is 1; strided x and y (ld > f).
  std::vector<float> xs{1, 1, -9, 2, 2, -9, 3, 3, -9}, ys(6, -7);
  a.values = nullptr;
  spmm_rows(a, xs.data(), 3, ys.data(), 3, 2, 0, 2);
  EXPECT_EQ(ys, (std::vector<float>{2, 2, -7, 4, 4, -7}));
}

TEST(SpmmKernel, BalancedSplitsCoverRowsAndBalanceWork) {
  // One heavy row then many light ones.
  std::vector<int64_t> indptr{0, 3000};
  for (int i = 0; i < 1000; ++i) indptr.push_back(indptr.back() + 1);
  const int64_t rows = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t parts : {1, 2, 4, 7}) {
    const auto s = balanced_row_splits(indptr.data(), rows, parts);
    ASSERT_EQ(static_cast<int64_t>(s.size()), parts + 1);
    EXPECT_EQ(s.front(), 0);
    EXPECT_EQ(s.back(), rows);
    for (size_t i = 1; i < s.size(); ++i) EXPECT_LE(s[i - 1], s[i]);
    if (parts == 2) {
      EXPECT_EQ(s[1], 1) << "the heavy row alone is more than half the work";
    }
  }
  EXPECT_EQ(balanced_row_splits(indptr.data(), 0, 3), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(SpmmKernel, TransposeIsStableAndScatterAgrees) {
  RandomCsr<int32_t> a(60, 40, 3);
  const int64_t nnz = a.indptr.back();
  std::vector<int64_t> t_indptr(a.cols + 1);
  std::vector<int32_t> t_indices(nnz);
  std::vector<float> t_values(nnz);
  transpose(a.ref(), t_indptr.data(), t_indices.data(), t_values.data());
  ASSERT_EQ(t_indptr.back(), nnz);
  // Every entry (r, c, v) of a appears as (c, r, v), rows of aᵀ in increasing r.
  std::vector<std::tuple<int64_t, int64_t, float>> want, got;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t e = a.indptr[r]; e < a.indptr[r + 1]; ++e) want.emplace_back(a.indices[e], r, a.values[e]);
  for (int64_t c = 0; c < a.cols; ++c) {
    for (int64_t e = t_indptr[c]; e < t_indptr[c + 1]; ++e) {
      got.emplace_back(c, t_indices[e], t_values[e]);
      if (e > t_indptr[c]) {
        EXPECT_LE(t_indices[e - 1], t_indices[e]);
      }
    }
  }
  std::stable_sort(want.begin(), want.end(),
                   [](auto& p, auto& q) { return std::get<0>(p) < std::get<0>(q); });
  EXPECT_EQ(want, got);

  // aᵀ x two ways.
  const int64_t f = 5;
  const auto x = random_dense(a.rows * f, 5);
  std::vector<float> via_transpose(a.cols * f), via_scatter(a.cols * f, 0.0f);
  CsrRef<int32_t> t{a.cols, a.rows, t_indptr.data(), t_indices.data(), t_values.data()};
  spmm_rows(t, x.data(), f, via_transpose.data(), f, f, 0, a.cols);
  spmm_transpose_scatter(a.ref(), x.data(), f, via_scatter.data(), f, f);
  for (size_t i = 0; i < via_scatter.size(); ++i) EXPECT_NEAR(via_transpose[i], via_scatter[i], 1e-4);
}

TEST(SpmmKernel, ReportsAnInstructionSet) {
  const std::string level = simd_level();
  EXPECT_TRUE(level == "avx512" || level == "avx2" || level == "baseline") << level;
}

}  // namespace
}  // namespace dgcn::cpu
