#include "fixtures.h"

#include <random>

namespace dgcn::testing {

GraphStore make_store(const EdgeList& edges, int64_t f, int64_t num_classes) {
  GraphStore s;
  const int64_t n = edges.num_nodes;
  s.graph = build_csr(n, edges.src, edges.dst, EdgeOptions{}, 2, "fixture");
  s.num_features = f;
  std::vector<float> feats(static_cast<size_t>(n * f));
  for (int64_t v = 0; v < n; ++v)
    for (int64_t c = 0; c < f; ++c) feats[v * f + c] = static_cast<float>(v) + static_cast<float>(c) / 10;
  s.features = Buffer::from_vector(std::move(feats));
  s.task = Task::kSingleLabel;
  s.num_classes = num_classes;
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) labels[v] = static_cast<int32_t>(v % num_classes);
  s.labels = Buffer::from_vector(std::move(labels));
  std::vector<int64_t> train, valid, test;
  for (int64_t v = 0; v < n; ++v) {
    if (v < n / 2) {
      train.push_back(v);
    } else if (v < 3 * n / 4) {
      valid.push_back(v);
    } else {
      test.push_back(v);
    }
  }
  s.train = Buffer::from_vector(std::move(train));
  s.valid = Buffer::from_vector(std::move(valid));
  s.test = Buffer::from_vector(std::move(test));
  s.degree = degrees_of(s.graph, 2);
  return s;
}

GraphStore community_store(Task task) {
  const int64_t n = 400, f = 8, classes = 4;
  std::mt19937_64 rng(3);
  EdgeList e{n, {}, {}};
  for (int64_t v = 0; v < n; ++v) {
    for (int k = 0; k < 6; ++k) {
      const bool same = rng() % 10 < 9;
      int64_t u = static_cast<int64_t>(rng() % (n / classes)) * classes;
      u += same ? v % classes : static_cast<int64_t>(rng() % classes);
      if (u != v) e.add(v, u);
    }
  }
  GraphStore s = make_store(e, f, classes);
  std::normal_distribution<float> noise(0.0f, 2.0f);
  std::vector<float> feats(static_cast<size_t>(n * f));
  for (int64_t v = 0; v < n; ++v)
    for (int64_t c = 0; c < f; ++c) feats[v * f + c] = (c == v % classes ? 1.0f : 0.0f) + noise(rng);
  s.features = Buffer::from_vector(std::move(feats));
  if (task == Task::kMultiLabel) {
    std::vector<uint8_t> bits(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) bits[v] = static_cast<uint8_t>((1 << (v % 4)) | ((v % 2 == 0) ? 8 : 0));
    s.task = Task::kMultiLabel;
    s.labels = Buffer::from_vector(std::move(bits));
  }
  s.validate("community store", 2);
  return s;
}

}  // namespace dgcn::testing
