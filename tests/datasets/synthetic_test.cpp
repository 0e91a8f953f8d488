#include "datasets/synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "base/digest.h"
#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;

std::string digest_of(const GraphStore& s) {
  Digest d;
  for (const Buffer* b : {&s.graph.indptr_buffer(), &s.graph.indices_buffer(), &s.features, &s.labels,
                          &s.train, &s.valid, &s.test, &s.degree}) {
    d.update(b->data(), b->size());
  }
  d.update(s.metadata_json.data(), s.metadata_json.size());
  return d.hex();
}

// Nearest-class-mean accuracy on the test nodes, class means from the train
// nodes: what a linear model can get out of `x` (a features-only baseline).
double nearest_mean_accuracy(const GraphStore& s, const std::vector<float>& x) {
  const int64_t d = s.num_features, C = s.num_classes;
  std::vector<double> mean(static_cast<size_t>(C * d), 0.0);
  std::vector<int64_t> count(static_cast<size_t>(C), 0);
  for (int64_t v : s.train_nodes()) {
    ++count[s.label(v)];
    for (int64_t j = 0; j < d; ++j) mean[s.label(v) * d + j] += x[v * d + j];
  }
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t j = 0; j < d; ++j) mean[c * d + j] /= std::max<int64_t>(1, count[c]);
  }
  int64_t right = 0;
  for (int64_t v : s.test_nodes()) {
    double best = INFINITY;
    int64_t guess = -1;
    for (int64_t c = 0; c < C; ++c) {
      double dist = 0;
      for (int64_t j = 0; j < d; ++j) dist += std::pow(x[v * d + j] - mean[c * d + j], 2);
      if (count[c] > 0 && dist < best) best = dist, guess = c;
    }
    right += guess == s.label(v);
  }
  return static_cast<double>(right) / static_cast<double>(s.test_nodes().size());
}

std::vector<float> features_of(const GraphStore& s) {
  auto f = s.features.as<float>();
  return {f.begin(), f.end()};
}

// Each row replaced by the mean over the node and its neighbours (one GCN-like hop).
std::vector<float> neighbour_means(const GraphStore& s, const std::vector<float>& x) {
  const int64_t d = s.num_features;
  std::vector<float> y(x.size());
  auto p = s.graph.indptr();
  auto idx = s.graph.indices<int32_t>();
  for (int64_t v = 0; v < s.num_nodes(); ++v) {
    for (int64_t j = 0; j < d; ++j) y[v * d + j] = x[v * d + j];
    for (int64_t e = p[v]; e < p[v + 1]; ++e) {
      for (int64_t j = 0; j < d; ++j) y[v * d + j] += x[idx[e] * d + j];
    }
    for (int64_t j = 0; j < d; ++j) y[v * d + j] /= static_cast<float>(1 + p[v + 1] - p[v]);
  }
  return y;
}

TEST(Synthetic, TinyPresetValidatesAndHasTheAskedShape) {
  const SyntheticSpec spec = synthetic_preset("tiny");
  GraphStore s = generate_synthetic(spec, 2);
  s.validate("tiny", 2);
  EXPECT_EQ(s.num_nodes(), spec.num_nodes);
  EXPECT_EQ(s.num_features, spec.num_features);
  EXPECT_EQ(s.num_classes, spec.num_classes);
  EXPECT_EQ(s.task, Task::kSingleLabel);
  const double mean_degree = static_cast<double>(s.num_edges()) / static_cast<double>(s.num_nodes());
  EXPECT_NEAR(mean_degree, spec.mean_degree, 0.05 * spec.mean_degree);
  // Symmetric, no self-loops, no duplicates.
  auto p = s.graph.indptr();
  auto idx = s.graph.indices<int32_t>();
  std::set<std::pair<int64_t, int64_t>> entries;
  for (int64_t v = 0; v < s.num_nodes(); ++v) {
    for (int64_t e = p[v]; e < p[v + 1]; ++e) {
      EXPECT_NE(idx[e], v);
      entries.insert({v, idx[e]});
    }
  }
  EXPECT_EQ(static_cast<int64_t>(entries.size()), s.num_edges());
  for (auto [u, v] : entries) ASSERT_TRUE(entries.count({v, u})) << u << " -> " << v;

  auto meta = nlohmann::json::parse(s.metadata_json);
  EXPECT_EQ(meta["generator"], "synthetic");
  EXPECT_EQ(meta["preset"], "tiny");
  EXPECT_EQ(meta["seed"], 0);
  EXPECT_EQ(meta["spec"]["num_nodes"], spec.num_nodes);
  EXPECT_EQ(meta["spec"]["homophily"], spec.homophily);
  EXPECT_EQ(meta["spec"]["ambiguous_fraction"], spec.ambiguous_fraction);
  EXPECT_EQ(meta["edges"]["csr_entries"], s.num_edges());
}

TEST(Synthetic, SameResultOnAnyThreadCountAndSeedsDiffer) {
  SyntheticSpec spec = synthetic_preset("tiny");
  const std::string one = digest_of(generate_synthetic(spec, 1));
  EXPECT_EQ(digest_of(generate_synthetic(spec, 2)), one);
  EXPECT_EQ(digest_of(generate_synthetic(spec, 5)), one);
  spec.seed = 1;
  EXPECT_NE(digest_of(generate_synthetic(spec, 2)), one);
}

TEST(Synthetic, EdgeHomophilyAndMeanDegreeLandOnTheSpec) {
  for (double h : {0.8, 0.5, 0.95}) {
    for (double degree : {8.0, 20.0}) {
      SyntheticSpec spec = synthetic_preset("tiny");
      spec.homophily = h;
      spec.ambiguous_fraction = 0;  // ambiguous nodes' edges leave their label (see the next test)
      spec.mean_degree = degree;
      spec.num_features = 0;
      GraphStore s = generate_synthetic(spec, 2);
      EXPECT_NEAR(edge_homophily(s, 2), h, 0.05) << "homophily " << h << ", degree " << degree;
      EXPECT_NEAR(static_cast<double>(s.num_edges()) / static_cast<double>(s.num_nodes()), degree,
                  0.05 * degree)
          << "homophily " << h;
    }
  }
}

TEST(Synthetic, UnreachableHomophilyIsAnError) {
  // Ambiguous nodes' edges follow their decoy class, so with 24% of them the
  // label homophily cannot reach 0.95.
  SyntheticSpec spec = synthetic_preset("tiny");
  spec.homophily = 0.95;
  const std::string e = error_of([&] { generate_synthetic(spec, 1); });
  EXPECT_NE(e.find("homophily 0.95 is out of reach"), std::string::npos) << e;
  EXPECT_NE(e.find("ambiguous_fraction 0.24"), std::string::npos) << e;
}

TEST(Synthetic, DegreesAndClassSizesAreSkewed) {
  GraphStore s = generate_synthetic(synthetic_preset("tiny"), 2);
  auto degree = s.degrees();
  const double mean = static_cast<double>(s.num_edges()) / static_cast<double>(s.num_nodes());
  const int32_t max = *std::max_element(degree.begin(), degree.end());
  EXPECT_GT(max, 5 * mean);
  std::vector<int32_t> sorted(degree.begin(), degree.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LT(sorted[sorted.size() / 2], mean);  // the median is below the mean: a long right tail

  std::vector<int64_t> size(static_cast<size_t>(s.num_classes), 0);
  for (int64_t v = 0; v < s.num_nodes(); ++v) ++size[s.label(v)];
  // Zipf(1) over 8 classes: the largest is 8x the smallest in expectation.
  EXPECT_GT(*std::max_element(size.begin(), size.end()), 4 * *std::min_element(size.begin(), size.end()));
  EXPECT_GT(size[0], size[7]);
}

TEST(Synthetic, SplitsHaveTheAskedSizes) {
  SyntheticSpec spec = synthetic_preset("tiny");
  spec.train_fraction = 0.1;
  spec.valid_fraction = 0.25;
  spec.test_fraction = 0.4;
  GraphStore s = generate_synthetic(spec, 2);
  EXPECT_EQ(s.train_nodes().size(), 300u);
  EXPECT_EQ(s.valid_nodes().size(), 750u);
  EXPECT_EQ(s.test_nodes().size(), 1200u);
  std::set<int64_t> all;
  for (auto part : {s.train_nodes(), s.valid_nodes(), s.test_nodes()}) {
    EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
    all.insert(part.begin(), part.end());
  }
  EXPECT_EQ(all.size(), 2250u);
}

TEST(Synthetic, MisleadingFeaturesFoolAFeaturesOnlyModelButNotTheNeighbours) {
  SyntheticSpec spec = synthetic_preset("tiny");
  spec.ambiguous_fraction = 0;
  spec.misleading_fraction = 0;
  spec.feature_noise = 1.0;
  GraphStore clean = generate_synthetic(spec, 2);
  EXPECT_GT(nearest_mean_accuracy(clean, features_of(clean)), 0.9);

  spec.misleading_fraction = 0.5;
  GraphStore misled = generate_synthetic(spec, 2);
  const std::vector<float> x = features_of(misled);
  const double own = nearest_mean_accuracy(misled, x);
  EXPECT_LT(own, 0.6);
  EXPECT_GT(own, 0.4);
  EXPECT_GT(nearest_mean_accuracy(misled, neighbour_means(misled, x)), own + 0.25);
}

TEST(Synthetic, AmbiguousNodesCapEvenTheNeighbourModel) {
  SyntheticSpec spec = synthetic_preset("tiny");
  spec.ambiguous_fraction = 0.25;
  spec.misleading_fraction = 0;
  spec.feature_noise = 1.0;
  spec.homophily = 0.7;
  GraphStore s = generate_synthetic(spec, 2);
  EXPECT_NEAR(edge_homophily(s, 2), spec.homophily, 0.05);
  const std::vector<float> x = features_of(s);
  EXPECT_NEAR(nearest_mean_accuracy(s, x), 0.75, 0.06);
  EXPECT_NEAR(nearest_mean_accuracy(s, neighbour_means(s, x)), 0.75, 0.06);
}

TEST(Synthetic, BadSpecsNameTheFieldAndValue) {
  auto error_for = [](auto change) {
    SyntheticSpec spec = synthetic_preset("tiny");
    change(spec);
    return error_of([&] { generate_synthetic(spec, 1); });
  };
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.num_nodes = -5; }).find("num_nodes is -5"), std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.mean_degree = -1; }).find("mean_degree is -1"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.mean_degree = 2000; }).find("mean_degree is 2000"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.num_features = -1; }).find("num_features is -1"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.num_classes = 0; }).find("num_classes is 0"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.homophily = 1.5; }).find("homophily is 1.5"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.homophily = NAN; }).find("homophily is nan"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.degree_exponent = 1; }).find("degree_exponent is 1"),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.train_fraction = -0.1; }).find("train_fraction is -0.1"),
            std::string::npos);
  EXPECT_NE(
      error_for([](SyntheticSpec& s) { s.test_fraction = 0.9; }).find("train_fraction + valid_fraction"),
      std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.misleading_fraction = 0.9; }).find("ambiguous_fraction + "),
            std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.num_classes = 1; }).find("only one class"), std::string::npos);
  EXPECT_NE(error_for([](SyntheticSpec& s) { s.feature_noise = -1; }).find("feature_noise is -1"),
            std::string::npos);
}

TEST(Synthetic, UnknownPresetListsTheValidOnes) {
  const std::string e = error_of([] { synthetic_preset("huge"); });
  EXPECT_NE(e.find("'huge'"), std::string::npos) << e;
  EXPECT_NE(e.find("tiny, small, products"), std::string::npos) << e;
  EXPECT_EQ(synthetic_preset("products").num_nodes, 2449029);
  EXPECT_EQ(synthetic_preset("products").num_classes, 47);
  EXPECT_EQ(synthetic_preset("small").num_nodes, 100000);
}

}  // namespace
}  // namespace dgcn
