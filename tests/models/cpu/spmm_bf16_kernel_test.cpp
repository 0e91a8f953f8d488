// The CPU SpMM kernel with bfloat16 x and/or y (Note [bf16 SpMM]): the same
// float32 sums as the float32 kernel on the widened x, rounded once.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "models/cpu/spmm_kernel.h"

namespace dgcn::cpu {
namespace {

template <class Index>
struct Csr {
  std::vector<int64_t> indptr{0};
  std::vector<Index> indices;
  std::vector<float> values;
  int64_t rows, cols;
  Csr(int64_t r, int64_t c, uint64_t seed) : rows(r), cols(c) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> w(-1.0f, 1.0f);
    for (int64_t i = 0; i < r; ++i) {
      const int64_t k = rng() % 5 == 0 ? 0 : static_cast<int64_t>(rng() % 12);
      for (int64_t t = 0; t < k; ++t) {
        indices.push_back(static_cast<Index>(rng() % c));
        values.push_back(w(rng));
      }
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
  }
  CsrRef<Index> ref() const { return {rows, cols, indptr.data(), indices.data(), values.data()}; }
};

// Random bf16 values over a few binades, and their exact float32 widening.
std::vector<Bf16> random_bf16(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<Bf16> v(static_cast<size_t>(n));
  for (auto& b : v) b = to_bf16(d(rng));
  return v;
}
std::vector<float> widen(const std::vector<Bf16>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = to_float(v[i]);
  return out;
}
std::vector<uint16_t> bits(const std::vector<Bf16>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = v[i].bits;
  return out;
}
std::vector<uint16_t> rounded_bits(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = to_bf16(v[i]).bits;
  return out;
}

TEST(SpmmBf16Kernel, RoundsToNearestEvenLikeC10) {
  const auto r = [](float v) { return to_bf16(v).bits; };
  EXPECT_EQ(r(1.0f), 0x3F80);
  EXPECT_EQ(r(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even below: down
  EXPECT_EQ(r(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, odd below: up
  EXPECT_EQ(r(std::bit_cast<float>(0x3F808001u)), 0x3F81);  // past the tie: up
  EXPECT_EQ(r(-2.0f), 0xC000);
  EXPECT_EQ(r(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(r(std::numeric_limits<float>::max()), 0x7F80);  // rounds past the largest bf16
  EXPECT_EQ(r(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(r(std::bit_cast<float>(0x00010000u)), 0x0001);  // a denormal is kept, not flushed
  EXPECT_EQ(to_float(Bf16{0x4049}), 3.140625f);
}

// y for every (x, y) type pair against the float32 kernel on the widened x;
// `portable` picks the non-AVX-512 loop.
template <class Index>
void check_types(int64_t f, bool portable) {
  Csr<Index> a(150, 120, 3 + f);
  const auto xb = random_bf16(a.cols * f, 5 + f);
  const auto xf = widen(xb);
  const size_t n = static_cast<size_t>(a.rows * f);
  const auto rows = [&](const auto* x, auto* y, int64_t rb, int64_t re) {
    if (portable) {
      spmm_rows_portable(a.ref(), x, f, y, f, f, rb, re);
    } else {
      spmm_rows(a.ref(), x, f, y, f, f, rb, re);
    }
  };
  std::vector<float> want(n, 7.0f);
  rows(xf.data(), want.data(), 0, a.rows);
  const auto want_bits = rounded_bits(want);
  const std::string what = "f " + std::to_string(f) + (portable ? " portable" : " dispatched");

  std::vector<Bf16> y_bb(n, Bf16{0x1234});  // garbage: every row must be written
  rows(xb.data(), y_bb.data(), 0, a.rows);
  EXPECT_EQ(bits(y_bb), want_bits) << "bf16 x, bf16 y: " << what;
  std::vector<float> y_bf(n, 7.0f);
  rows(xb.data(), y_bf.data(), 0, a.rows);
  EXPECT_EQ(y_bf, want) << "bf16 x, float y: " << what;
  std::vector<Bf16> y_fb(n, Bf16{0x1234});
  rows(xf.data(), y_fb.data(), 0, a.rows);
  EXPECT_EQ(bits(y_fb), want_bits) << "float x, bf16 y: " << what;

  // Any split of the rows gives the same bits.
  std::vector<Bf16> y_split(n, Bf16{0x1234});
  const auto splits = balanced_row_splits(a.indptr.data(), a.rows, 7);
  for (size_t p = 0; p + 1 < splits.size(); ++p) rows(xb.data(), y_split.data(), splits[p], splits[p + 1]);
  EXPECT_EQ(bits(y_split), want_bits) << "split in 7: " << what;

  // And the result is the exact product rounded once: within one bf16
  // rounding (half an ulp: at most 2^-8 relative) of a double reference,
  // plus the float32 sums' error.
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t j = 0; j < f; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
        const double t = double(a.values[e]) * xf[static_cast<size_t>(a.indices[e] * f + j)];
        exact += t;
        magnitude += std::abs(t);
      }
      const double got = to_float(y_bb[static_cast<size_t>(r * f + j)]);
      ASSERT_LE(std::abs(got - exact), std::abs(exact) * 0x1p-8 + magnitude * 1e-6) << what;
    }
  }
}

TEST(SpmmBf16Kernel, EveryTypePairIsTheFloatResultRoundedOnce) {
  // Around the 16-lane vectors and the 128-feature blocks, and the real widths.
  for (int64_t f : {1, 15, 16, 17, 47, 100, 128, 129, 300}) {
    for (bool portable : {false, true}) {
      check_types<int32_t>(f, portable);
      check_types<int64_t>(f, portable);
    }
  }
}

// Ties and NaN through the vector store (16 full lanes and a masked tail).
TEST(SpmmBf16Kernel, OutputRoundingInTheKernel) {
  const int64_t f = 20;
  std::vector<int64_t> indptr{0, 1};
  std::vector<int32_t> indices{0};
  std::vector<float> values{1.0f};
  const CsrRef<int32_t> a{1, 1, indptr.data(), indices.data(), values.data()};
  std::vector<float> x(f);
  std::vector<uint16_t> want(f);
  for (int64_t j = 0; j < f; ++j) {
    const uint32_t pattern[] = {0x3F808000u, 0x3F818000u, 0x3F808001u, 0x7FC00000u, 0xC0000000u};
    x[j] = std::bit_cast<float>(pattern[j % 5]);
    want[j] = std::vector<uint16_t>{0x3F80, 0x3F82, 0x3F81, 0x7FC0, 0xC000}[j % 5];
  }
  for (bool portable : {false, true}) {
    std::vector<Bf16> y(f);
    if (portable) {
      spmm_rows_portable(a, x.data(), f, y.data(), f, f, 0, 1);
    } else {
      spmm_rows(a, x.data(), f, y.data(), f, f, 0, 1);
    }
    EXPECT_EQ(bits(y), want) << (portable ? "portable" : "dispatched");
  }
}

TEST(SpmmBf16Kernel, ScatterReadsBf16AsItsWidening) {
  Csr<int64_t> a(60, 40, 9);
  const int64_t f = 33;
  const auto xb = random_bf16(a.rows * f, 4);
  const auto xf = widen(xb);
  std::vector<float> from_bf16(static_cast<size_t>(a.cols * f), 0.0f), from_float = from_bf16;
  spmm_transpose_scatter(a.ref(), xb.data(), f, from_bf16.data(), f, f);
  spmm_transpose_scatter(a.ref(), xf.data(), f, from_float.data(), f, f);
  EXPECT_EQ(from_bf16, from_float);
}

}  // namespace
}  // namespace dgcn::cpu
