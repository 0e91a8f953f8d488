#include "train/features.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "base/parallel.h"

namespace dgcn {

float smallest_feature(const GraphStore& store, int num_threads) {
  // The smallest feature of the whole matrix (PyG subtracts value.min()).
  const auto in = store.features.as<float>();
  if (in.empty()) return 0.0f;
  std::vector<float> mins(static_cast<size_t>(std::max(1, num_threads)), in[0]);
  parallel_for(static_cast<int64_t>(in.size()), num_threads, [&](int64_t begin, int64_t end, int t) {
    float m = in[static_cast<size_t>(begin)];
    for (int64_t i = begin; i < end; ++i) m = std::min(m, in[static_cast<size_t>(i)]);
    mins[static_cast<size_t>(t)] = m;
  });
  return *std::min_element(mins.begin(), mins.end());
}

Buffer normalized_features(const GraphStore& store, int num_threads) {
  return normalized_features(store, num_threads, smallest_feature(store, num_threads));
}

Buffer normalized_features(const GraphStore& store, int num_threads, float lowest) {
  const int64_t n = store.num_nodes(), f = store.num_features;
  const auto in = store.features.as<float>();
  MutableBuffer out = Buffer::allocate(static_cast<size_t>(n * f) * sizeof(float));
  auto dst = out.as_mutable<float>();
  parallel_for(n, num_threads, [&](int64_t begin, int64_t end, int) {
    for (int64_t v = begin; v < end; ++v) {
      double sum = 0;
      for (int64_t c = 0; c < f; ++c) sum += static_cast<double>(in[v * f + c]) - lowest;
      const double scale = 1.0 / std::max(sum, 1.0);
      for (int64_t c = 0; c < f; ++c) {
        dst[v * f + c] = static_cast<float>((static_cast<double>(in[v * f + c]) - lowest) * scale);
      }
    }
  });
  return out;
}

Buffer input_features(const GraphStore& store, bool normalize, int num_threads, Collectives* parts) {
  if (!normalize) return store.features;
  float lowest = smallest_feature(store, num_threads);
  if (parts != nullptr) {
    // The shift of the whole graph: the smallest of every part's smallest.
    const double mine =
        store.num_features > 0 && store.num_nodes() > 0 ? lowest : std::numeric_limits<double>::infinity();
    double smallest = mine;
    for (const auto& theirs : all_gather(*parts, std::vector<double>{mine}))
      smallest = std::min(smallest, theirs[0]);
    lowest = static_cast<float>(smallest);
  }
  return normalized_features(store, num_threads, lowest);
}

}  // namespace dgcn
