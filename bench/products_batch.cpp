#include "bench/products_batch.h"

#include <algorithm>
#include <random>

#include "base/error.h"

namespace dgcn {

ProductsBatch products_batch(const ProductsBatchSpec& spec) {
  DGCN_CHECK(!spec.fanouts.empty() && !spec.new_fraction.empty() && spec.seeds >= 1,
             "products batch: needs fanouts, new fractions and seeds (got {}, {}, {})", spec.fanouts.size(),
             spec.new_fraction.size(), spec.seeds);
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<double> coin(0, 1);
  ProductsBatch b;
  b.indptr = {0};
  b.within = {spec.seeds};
  int64_t discovered = spec.seeds, hop_begin = 0;
  for (size_t h = 0; h < spec.fanouts.size(); ++h) {
    DGCN_CHECK(spec.fanouts[h] >= 0, "products batch: fanout {} of hop {} is negative", spec.fanouts[h], h);
    const double p_new = spec.new_fraction[std::min(h, spec.new_fraction.size() - 1)];
    const int64_t hop_end = discovered;
    for (int64_t r = hop_begin; r < hop_end; ++r) {
      for (int64_t k = 0; k < spec.fanouts[h]; ++k) {
        if (coin(rng) < p_new) {
          b.indices.push_back(static_cast<int32_t>(discovered++));
        } else {
          b.indices.push_back(
              static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, discovered - 1)(rng)));
        }
      }
      b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
    }
    hop_begin = hop_end;
    b.within.push_back(discovered);
  }
  return b;
}

}  // namespace dgcn
