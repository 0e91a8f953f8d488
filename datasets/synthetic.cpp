#include "datasets/synthetic.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "base/random.h"
#include "base/timing.h"
#include "datasets/splits.h"
#include "datasets/store_assembly.h"

namespace dgcn {

namespace {

// One stream per kind of draw, so that e.g. another feature count leaves the
// graph as it was.
enum Stream : uint64_t { kClasses = 1, kWeights, kEstimate, kEdges, kMeans, kFeatures, kSplits };

// Work is cut into chunks of fixed size; a chunk's draws come from the stream
// (seed, kind, chunk index) alone, whichever thread runs it.
constexpr int64_t kNodeChunk = int64_t{1} << 16;
constexpr int64_t kEdgeChunk = int64_t{1} << 16;
constexpr int64_t kRowChunk = int64_t{1} << 12;
// Edges sampled to solve for the edge count and the same-class probability
// (Note [Edge count]); the estimate's relative error is ~1e-4.
constexpr int64_t kEstimateSamples = int64_t{1} << 18;
constexpr int kEstimateRounds = 4;

// Walker's alias method (Vose's construction): O(n) to build, O(1) and one
// cache line per draw. Slot i gives `node` with probability `accept`, else
// `other`; the entries carry the nodes' classes too, so that drawing a
// same-class destination needs no extra lookup of the source's class.
struct alignas(16) AliasEntry {
  float accept;
  int32_t node;
  int32_t other;
  uint16_t node_class;
  uint16_t other_class;
};

// Fills out[i] for the distribution ∝ weights[i] over nodes[i]; cls[v] is node v's graph class.
void build_alias(std::span<const double> weights, std::span<const int32_t> nodes,
                 std::span<const int32_t> cls, AliasEntry* out) {
  const size_t n = weights.size();
  double total = 0;
  for (double w : weights) total += w;
  std::vector<double> scaled(n);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * static_cast<double>(n) / total;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
    const auto c = static_cast<uint16_t>(cls[nodes[i]]);
    out[i] = {1.0f, nodes[i], nodes[i], c, c};
  }
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back(), l = large.back();
    small.pop_back();
    out[s].accept = static_cast<float>(scaled[s]);
    out[s].other = nodes[l];
    out[s].other_class = out[l].node_class;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers (rounding) keep their own node: accept stays 1.
}

// One 64-bit draw gives both parts of an alias draw: r * n = slot * 2^64 +
// rest, where slot is uniform in [0, n) (up to n / 2^64) and rest / 2^64 is a
// uniform fraction, independent of the slot up to the same error.
inline uint64_t alias_slot(uint64_t r, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}
inline bool alias_accepts(const AliasEntry& e, uint64_t r, uint64_t n) {
  const auto rest = static_cast<uint64_t>(static_cast<unsigned __int128>(r) * n);
  return static_cast<float>(rest >> 40) * 0x1.0p-24f < e.accept;
}

inline double unit(uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

// Everything an edge draw needs.
struct Model {
  int64_t n = 0;
  std::vector<int32_t> cls;        // the label
  std::vector<int32_t> decoy;      // another class: what an ambiguous node looks like
  std::vector<int32_t> graph_cls;  // the class the edges see: decoy for ambiguous nodes, else cls
  std::vector<double> weight;
  double total_weight = 0;
  std::vector<double> class_weight;
  std::vector<AliasEntry> all;       // over every node
  std::vector<AliasEntry> by_class;  // graph class c's nodes in [class_begin[c], class_begin[c+1])
  std::vector<int64_t> class_begin;
  double same_class = 0;  // q: probability that a destination is drawn from the source's class

  // Draws `count` edges src[i] -> dst[i], three numbers of `rng` per edge.
  // The tables are far larger than the caches, so edges go in batches: all
  // source slots of a batch are prefetched, then all destination slots, which
  // keeps many cache misses in flight instead of one chain per edge.
  void draw_edges(Rng& rng, int64_t* src, int64_t* dst, int64_t count) const {
    constexpr int64_t kBatch = 32;
    uint64_t r_src[kBatch], r_dst[kBatch], size[kBatch];
    bool same[kBatch];
    const AliasEntry* table[kBatch];
    const auto nn = static_cast<uint64_t>(n);
    for (int64_t i = 0; i < count; i += kBatch) {
      const int64_t b = std::min(kBatch, count - i);
      for (int64_t k = 0; k < b; ++k) {
        r_src[k] = rng.next();
        same[k] = unit(rng.next()) < same_class;
        r_dst[k] = rng.next();
        __builtin_prefetch(all.data() + alias_slot(r_src[k], nn));
      }
      for (int64_t k = 0; k < b; ++k) {
        const AliasEntry& e = all[alias_slot(r_src[k], nn)];
        const bool keep = alias_accepts(e, r_src[k], nn);
        src[i + k] = keep ? e.node : e.other;
        if (same[k]) {
          const int64_t c = keep ? e.node_class : e.other_class;
          table[k] = by_class.data() + class_begin[c];
          size[k] = static_cast<uint64_t>(class_begin[c + 1] - class_begin[c]);
        } else {
          table[k] = all.data();
          size[k] = nn;
        }
        __builtin_prefetch(table[k] + alias_slot(r_dst[k], size[k]));
      }
      for (int64_t k = 0; k < b; ++k) {
        const AliasEntry& e = table[k][alias_slot(r_dst[k], size[k])];
        dst[i + k] = alias_accepts(e, r_dst[k], size[k]) ? e.node : e.other;
      }
    }
  }

  // Probability that one edge draw gives a -> b.
  double directed_probability(int64_t a, int64_t b) const {
    const double to_b =
        (1 - same_class) * weight[b] / total_weight +
        (graph_cls[a] == graph_cls[b] ? same_class * weight[b] / class_weight[graph_cls[a]] : 0.0);
    return weight[a] / total_weight * to_b;
  }
};

Model make_model(const SyntheticSpec& spec, int threads) {
  Model m;
  const int64_t n = spec.num_nodes, C = spec.num_classes;
  m.n = n;
  std::vector<double> cdf(static_cast<size_t>(C));
  double acc = 0;
  for (int64_t c = 0; c < C; ++c) cdf[c] = acc += std::pow(static_cast<double>(c + 1), -spec.class_skew);
  for (double& x : cdf) x /= acc;
  cdf.back() = 1.0;

  m.cls.resize(static_cast<size_t>(n));
  m.decoy.resize(static_cast<size_t>(n));
  m.graph_cls.resize(static_cast<size_t>(n));
  m.weight.resize(static_cast<size_t>(n));
  const double inv_alpha = 1.0 / (spec.degree_exponent - 1.0);
  parallel_for_chunks(n, kNodeChunk, threads, [&](int64_t begin, int64_t end) {
    Rng classes(stream_key(spec.seed, {kClasses, static_cast<uint64_t>(begin / kNodeChunk)}));
    Rng weights(stream_key(spec.seed, {kWeights, static_cast<uint64_t>(begin / kNodeChunk)}));
    for (int64_t v = begin; v < end; ++v) {
      const double u = classes.uniform();
      m.cls[v] = static_cast<int32_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      if (m.cls[v] >= C) m.cls[v] = static_cast<int32_t>(C - 1);
      m.decoy[v] = C > 1
                       ? static_cast<int32_t>((m.cls[v] + 1 + static_cast<int64_t>(classes.below(C - 1))) % C)
                       : m.cls[v];
      // Pareto(alpha = gamma - 1) with minimum 1: P(w > x) = x^-alpha; the
      // lightest ambiguous_fraction of the weight distribution is ambiguous.
      const double x = weights.uniform();  // [0, 1)
      m.weight[v] = std::min(std::pow(1.0 - x, -inv_alpha), spec.max_weight_ratio);
      m.graph_cls[v] = x < spec.ambiguous_fraction ? m.decoy[v] : m.cls[v];
    }
  });

  m.class_weight.assign(static_cast<size_t>(C), 0.0);
  m.class_begin.assign(static_cast<size_t>(C) + 1, 0);
  for (int64_t v = 0; v < n; ++v) {
    m.class_weight[m.graph_cls[v]] += m.weight[v];
    ++m.class_begin[m.graph_cls[v] + 1];
  }
  for (int64_t c = 0; c < C; ++c) m.class_begin[c + 1] += m.class_begin[c];
  m.total_weight = 0;
  for (double w : m.class_weight) m.total_weight += w;

  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) ids[v] = static_cast<int32_t>(v);
  m.all.resize(static_cast<size_t>(n));
  build_alias(m.weight, ids, m.graph_cls, m.all.data());

  // Group nodes by class (ascending ids within a class) and build one table per class.
  std::vector<int64_t> cursor(m.class_begin.begin(), m.class_begin.end() - 1);
  std::vector<double> grouped_weight(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) {
    const int64_t at = cursor[m.graph_cls[v]]++;
    ids[at] = static_cast<int32_t>(v);
    grouped_weight[at] = m.weight[v];
  }
  m.by_class.resize(static_cast<size_t>(n));
  std::span<const double> gw(grouped_weight);
  std::span<const int32_t> gi(ids);
  parallel_for_chunks(C, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t b = m.class_begin[c], e = m.class_begin[c + 1];
      if (e > b) build_alias(gw.subspan(b, e - b), gi.subspan(b, e - b), m.graph_cls, m.by_class.data() + b);
    }
  });
  return m;
}

// Note [Edge count]
// Symmetrizing and dropping self-loops and duplicates shrinks the edge list,
// by how much depends on the weights (hubs meet often). With m independent
// draws, the unordered pair {u, v} drawn with probability p per draw is kept
// with probability 1 - (1 - p)^m, so the expected number of distinct pairs is
//   D(m) = sum over pairs of (1 - (1 - p)^m) = E over draws of (1 - (1 - p)^m) / p,
// which we estimate from kEstimateSamples draws (self-loops count 0) and solve
// D(m) = mean_degree * n / 2 by Newton's method (D is increasing and concave,
// so Newton from m = target climbs to the root from below). The same sample
// estimates the edge homophily after deduplication (intra-class pairs repeat
// more often), and the same-class probability q is corrected for it.
struct EdgePlan {
  int64_t edges = 0;
  double expected_homophily = 0;
};

EdgePlan plan_edges(const SyntheticSpec& spec, Model& model, int threads) {
  const double target = spec.mean_degree * static_cast<double>(spec.num_nodes) / 2.0;
  double s = 0;  // homophily of class-blind edges
  for (double w : model.class_weight) s += (w / model.total_weight) * (w / model.total_weight);
  const double span = 1.0 - s;
  auto clamp01 = [](double x) { return std::min(1.0, std::max(0.0, x)); };
  model.same_class = span > 1e-12 ? clamp01((spec.homophily - s) / span) : 0.0;
  EdgePlan plan;
  if (target <= 0) return plan;

  std::vector<double> p(kEstimateSamples), logq(kEstimateSamples);
  std::vector<uint8_t> same(kEstimateSamples);
  double m = target, last_q = 0, last_h = 0;
  for (int round = 0; round < kEstimateRounds; ++round) {
    parallel_for_chunks(kEstimateSamples, kEdgeChunk, threads, [&](int64_t begin, int64_t end) {
      Rng rng(stream_key(spec.seed, {kEstimate, static_cast<uint64_t>(begin / kEdgeChunk)}));
      std::vector<int64_t> us(static_cast<size_t>(end - begin)), vs(us.size());
      model.draw_edges(rng, us.data(), vs.data(), end - begin);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t u = us[i - begin], v = vs[i - begin];
        p[i] = u == v ? 0.0 : model.directed_probability(u, v) + model.directed_probability(v, u);
        logq[i] = p[i] > 0 ? std::log1p(-p[i]) : 0.0;
        same[i] = model.cls[u] == model.cls[v];  // labels, not graph classes
      }
    });
    // Newton on D(m) - target; sums run in index order (deterministic).
    for (int it = 0; it < 100; ++it) {
      double d = 0, slope = 0;
      for (int64_t i = 0; i < kEstimateSamples; ++i) {
        if (p[i] <= 0) continue;
        const double keep_none = std::exp(m * logq[i]);
        d += (1.0 - keep_none) / p[i];
        slope += -logq[i] * keep_none / p[i];
      }
      d /= kEstimateSamples;
      slope /= kEstimateSamples;
      DGCN_CHECK(slope > 0, "synthetic '{}': mean_degree {} cannot be reached by {} nodes", spec.name,
                 spec.mean_degree, spec.num_nodes);
      const double step = (target - d) / slope;
      m += step;
      DGCN_CHECK(m <= 100.0 * target + 1e6,
                 "synthetic '{}': mean_degree {} is too close to the {} nodes' maximum: after dropping "
                 "duplicates it would take more than {:.0f} sampled edges",
                 spec.name, spec.mean_degree, spec.num_nodes, 100.0 * target + 1e6);
      if (std::abs(step) < 0.25) break;
    }
    double kept = 0, kept_same = 0;
    for (int64_t i = 0; i < kEstimateSamples; ++i) {
      if (p[i] <= 0) continue;
      const double g = (1.0 - std::exp(m * logq[i])) / p[i];
      kept += g;
      if (same[i]) kept_same += g;
    }
    plan.expected_homophily = kept > 0 ? kept_same / kept : 0.0;
    // The homophily is close to linear in q: a secant step from the last two
    // rounds (a plain step scaled by 1 / span in round 0).
    const double q = model.same_class, h = plan.expected_homophily;
    double next = q + (spec.homophily - h) / span;
    if (round > 0 && std::abs(q - last_q) > 1e-9 && std::abs(h - last_h) > 1e-9) {
      next = q + (spec.homophily - h) * (q - last_q) / (h - last_h);
    }
    last_q = q;
    last_h = h;
    if (round + 1 < kEstimateRounds && span > 1e-12) model.same_class = clamp01(next);
  }
  // Out of reach when q is pinned at 0 or 1 (e.g. many ambiguous nodes, whose
  // edges leave their label); the estimate is good to ~1e-3.
  DGCN_CHECK(
      std::abs(plan.expected_homophily - spec.homophily) <= 0.02,
      "synthetic spec '{}': homophily {} is out of reach with ambiguous_fraction {}, class_skew {} and {} "
      "classes: the closest is about {:.3f}",
      spec.name, spec.homophily, spec.ambiguous_fraction, spec.class_skew, spec.num_classes,
      plan.expected_homophily);
  plan.edges = static_cast<int64_t>(std::ceil(m));
  return plan;
}

// Two standard normals from one 64-bit draw: Box-Muller on two 24-bit
// uniforms (tails end at 5.8 sigma, irrelevant for features).
inline void normal_pair(uint64_t r, float& a, float& b) {
  constexpr float kTwoPi = 6.28318530717958647692f;
  const float u1 = static_cast<float>((r >> 40) + 1) * 0x1.0p-24f;  // (0, 1]
  const float u2 = static_cast<float>(r & 0xffffff) * 0x1.0p-24f;   // [0, 1)
  const float radius = std::sqrt(-2.0f * std::log(u1));
  a = radius * std::cos(kTwoPi * u2);
  b = radius * std::sin(kTwoPi * u2);
}

void fill_normals(Rng& rng, float* out, int64_t count) {
  int64_t i = 0;
  for (; i + 1 < count; i += 2) normal_pair(rng.next(), out[i], out[i + 1]);
  if (i < count) {
    float spare;
    normal_pair(rng.next(), out[i], spare);
  }
}

// Row v is drawn around the mean of the class it shows: its decoy if it is
// ambiguous (its graph class differs from its label) or misleading, else its label.
Buffer make_features(const SyntheticSpec& spec, const Model& model, int threads) {
  const int64_t n = spec.num_nodes, d = spec.num_features, C = spec.num_classes;
  std::vector<float> means(static_cast<size_t>(C * d));
  for (int64_t c = 0; c < C; ++c) {
    Rng rng(stream_key(spec.seed, {kMeans, static_cast<uint64_t>(c)}));
    fill_normals(rng, means.data() + c * d, d);
  }
  // misleading_fraction counts all nodes; only clear (non-ambiguous) ones are drawn.
  const double misleading_given_clear =
      spec.ambiguous_fraction < 1 ? spec.misleading_fraction / (1.0 - spec.ambiguous_fraction) : 0.0;
  const float noise = static_cast<float>(spec.feature_noise);
  const float scale = static_cast<float>(1.0 / std::sqrt(1.0 + spec.feature_noise * spec.feature_noise));
  MutableBuffer features = Buffer::allocate(static_cast<size_t>(n * d) * sizeof(float));
  float* x = features.as_mutable<float>().data();
  parallel_for_chunks(n, kRowChunk, threads, [&](int64_t begin, int64_t end) {
    Rng rng(stream_key(spec.seed, {kFeatures, static_cast<uint64_t>(begin / kRowChunk)}));
    for (int64_t v = begin; v < end; ++v) {
      const bool misleading = unit(rng.next()) < misleading_given_clear;
      const bool ambiguous = model.graph_cls[v] != model.cls[v];
      const int64_t shown = ambiguous || misleading ? model.decoy[v] : model.cls[v];
      float* row = x + v * d;
      const float* mean = means.data() + shown * d;
      fill_normals(rng, row, d);
      for (int64_t j = 0; j < d; ++j) row[j] = (mean[j] + noise * row[j]) * scale;
    }
  });
  return features;
}

nlohmann::json spec_json(const SyntheticSpec& s) {
  return {{"name", s.name},
          {"num_nodes", s.num_nodes},
          {"mean_degree", s.mean_degree},
          {"num_features", s.num_features},
          {"num_classes", s.num_classes},
          {"degree_exponent", s.degree_exponent},
          {"max_weight_ratio", s.max_weight_ratio},
          {"class_skew", s.class_skew},
          {"homophily", s.homophily},
          {"ambiguous_fraction", s.ambiguous_fraction},
          {"misleading_fraction", s.misleading_fraction},
          {"feature_noise", s.feature_noise},
          {"train_fraction", s.train_fraction},
          {"valid_fraction", s.valid_fraction},
          {"test_fraction", s.test_fraction},
          {"seed", s.seed}};
}

void check_fraction(const SyntheticSpec& s, const char* field, double value) {
  DGCN_CHECK(value >= 0 && value <= 1, "synthetic spec '{}': {} is {}, not in [0, 1]", s.name, field, value);
}

}  // namespace

SyntheticSpec synthetic_preset(const std::string& name) {
  SyntheticSpec s;
  s.name = name;
  if (name == "tiny") {
    s.num_nodes = 3000;
    s.mean_degree = 20;
    s.num_features = 16;
    s.num_classes = 8;
    s.max_weight_ratio = 50;
    s.train_fraction = 0.5;
    s.valid_fraction = 0.2;
    s.test_fraction = 0.3;
  } else if (name == "small") {
    s.num_nodes = 100000;
    s.mean_degree = 30;
    s.num_features = 100;
    s.num_classes = 47;
    s.max_weight_ratio = 300;
    s.train_fraction = 0.2;
    s.valid_fraction = 0.05;
    s.test_fraction = 0.75;
  } else if (name == "products") {
    // ogbn-products: 2,449,029 nodes, 123,718,280 CSR entries, 100 features,
    // 47 classes, 196,615 / 39,323 / 2,213,091 train / valid / test nodes.
    s.num_nodes = 2449029;
    s.mean_degree = 50.5;
    s.num_features = 100;
    s.num_classes = 47;
    s.max_weight_ratio = 1000;
    s.train_fraction = 0.08;
    s.valid_fraction = 0.016;
    s.test_fraction = 0.904;
  } else {
    throw Error(fmt::format("synthetic: unknown preset '{}' (valid presets: tiny, small, products)", name));
  }
  return s;
}

void validate_synthetic_spec(const SyntheticSpec& s) {
  const std::string& w = s.name;
  DGCN_CHECK(s.num_nodes >= 1 && s.num_nodes <= std::numeric_limits<int32_t>::max(),
             "synthetic spec '{}': num_nodes is {}, not in [1, 2^31 - 1]", w, s.num_nodes);
  DGCN_CHECK(s.mean_degree >= 0 && s.mean_degree <= static_cast<double>(s.num_nodes - 1) / 2,
             "synthetic spec '{}': mean_degree is {}, not in [0, (num_nodes - 1) / 2 = {}] (duplicates are "
             "dropped, so a denser graph cannot be drawn)",
             w, s.mean_degree, static_cast<double>(s.num_nodes - 1) / 2);
  DGCN_CHECK(s.num_features >= 0 && s.num_features <= (int64_t{1} << 20),
             "synthetic spec '{}': num_features is {}, not in [0, 2^20]", w, s.num_features);
  DGCN_CHECK(s.num_classes >= 1 && s.num_classes <= 65535,
             "synthetic spec '{}': num_classes is {}, not in [1, 65535]", w, s.num_classes);
  DGCN_CHECK(s.degree_exponent > 1 && std::isfinite(s.degree_exponent),
             "synthetic spec '{}': degree_exponent is {}, must be a number > 1", w, s.degree_exponent);
  DGCN_CHECK(s.max_weight_ratio >= 1 && std::isfinite(s.max_weight_ratio),
             "synthetic spec '{}': max_weight_ratio is {}, must be a number >= 1", w, s.max_weight_ratio);
  DGCN_CHECK(s.class_skew >= 0 && s.class_skew <= 10, "synthetic spec '{}': class_skew is {}, not in [0, 10]",
             w, s.class_skew);
  check_fraction(s, "homophily", s.homophily);
  check_fraction(s, "misleading_fraction", s.misleading_fraction);
  check_fraction(s, "ambiguous_fraction", s.ambiguous_fraction);
  DGCN_CHECK(s.ambiguous_fraction + s.misleading_fraction <= 1 + 1e-9,
             "synthetic spec '{}': ambiguous_fraction + misleading_fraction is {}, more than 1", w,
             s.ambiguous_fraction + s.misleading_fraction);
  DGCN_CHECK(
      (s.misleading_fraction == 0 && s.ambiguous_fraction == 0) || s.num_classes >= 2,
      "synthetic spec '{}': misleading_fraction is {} and ambiguous_fraction {}, but there is only one "
      "class (a decoy class is needed)",
      w, s.misleading_fraction, s.ambiguous_fraction);
  DGCN_CHECK(s.feature_noise >= 0 && std::isfinite(s.feature_noise),
             "synthetic spec '{}': feature_noise is {}, must be a number >= 0", w, s.feature_noise);
  check_fraction(s, "train_fraction", s.train_fraction);
  check_fraction(s, "valid_fraction", s.valid_fraction);
  check_fraction(s, "test_fraction", s.test_fraction);
  const double sum = s.train_fraction + s.valid_fraction + s.test_fraction;
  DGCN_CHECK(sum <= 1 + 1e-9,
             "synthetic spec '{}': train_fraction + valid_fraction + test_fraction is {}, more than 1", w,
             sum);
}

GraphStore generate_synthetic(const SyntheticSpec& spec, int num_threads) {
  validate_synthetic_spec(spec);
  const int threads = resolve_threads(num_threads);
  const auto t_all = Clock::now();
  auto t = Clock::now();

  Model model = make_model(spec, threads);
  const EdgePlan plan = plan_edges(spec, model, threads);
  spdlog::info(
      "synthetic '{}': {} nodes, {} classes; drawing {} edges (same-class probability {:.4f}) ({:.2f} s)",
      spec.name, spec.num_nodes, spec.num_classes, plan.edges, model.same_class, seconds_since(t));

  t = Clock::now();
  std::vector<int64_t> src(static_cast<size_t>(plan.edges)), dst(static_cast<size_t>(plan.edges));
  parallel_for_chunks(plan.edges, kEdgeChunk, threads, [&](int64_t begin, int64_t end) {
    Rng rng(stream_key(spec.seed, {kEdges, static_cast<uint64_t>(begin / kEdgeChunk)}));
    model.draw_edges(rng, src.data() + begin, dst.data() + begin, end - begin);
  });
  spdlog::info("synthetic '{}': drew {} edges ({:.2f} s)", spec.name, plan.edges, seconds_since(t));

  GraphStore store;
  t = Clock::now();
  const nlohmann::json edges = set_graph(store, spec.num_nodes, std::move(src), std::move(dst), EdgeOptions{},
                                         threads, "synthetic '" + spec.name + "' edges");
  spdlog::info(
      "synthetic '{}': CSR with {} entries, mean degree {:.2f} ({:.2f} s)", spec.name, store.num_edges(),
      static_cast<double>(store.num_edges()) / static_cast<double>(spec.num_nodes), seconds_since(t));

  // The alias tables are no longer needed; the features need the classes.
  model.all = {};
  model.by_class = {};
  model.weight = {};

  t = Clock::now();
  store.num_features = spec.num_features;
  if (spec.num_features > 0) store.features = make_features(spec, model, threads);
  std::vector<int32_t> cls = std::move(model.cls);
  spdlog::info("synthetic '{}': {} x {} features ({:.2f} s)", spec.name, spec.num_nodes, spec.num_features,
               seconds_since(t));

  store.task = Task::kSingleLabel;
  store.num_classes = spec.num_classes;
  SplitSpec split;
  split.kind = SplitSpec::kRatio;
  split.train_ratio = spec.train_fraction;
  split.valid_ratio = spec.valid_fraction;
  split.test_ratio = spec.test_fraction;
  set_splits(store,
             make_splits(split, spec.num_nodes, cls, spec.num_classes, stream_key(spec.seed, {kSplits})));
  store.labels = Buffer::from_vector(std::move(cls));

  const double homophily = edge_homophily(store, threads);
  nlohmann::json meta = {{"generator", "synthetic"},
                         {"preset", spec.name},
                         {"seed", spec.seed},
                         {"spec", spec_json(spec)},
                         {"sampled_edges", plan.edges},
                         {"same_class_probability", model.same_class},
                         {"expected_edge_homophily", plan.expected_homophily},
                         {"edge_homophily", homophily},
                         {"edges", edges}};
  store.metadata_json = meta.dump();
  spdlog::info("synthetic '{}': done, edge homophily {:.4f} ({:.2f} s in all)", spec.name, homophily,
               seconds_since(t_all));
  return store;
}

double edge_homophily(const GraphStore& store, int num_threads) {
  DGCN_CHECK(store.task == Task::kSingleLabel, "edge_homophily: needs single-label classes, the store has {}",
             task_name(store.task));
  const int threads = resolve_threads(num_threads);
  const auto indptr = store.graph.indptr();
  const auto labels = store.labels.as<int32_t>();
  std::atomic<int64_t> same{0}, counted{0};
  store.graph.visit_indices([&](auto indices) {
    parallel_for_chunks(store.num_nodes(), 4096, threads, [&](int64_t begin, int64_t end) {
      int64_t s = 0, c = 0;
      for (int64_t v = begin; v < end; ++v) {
        if (labels[v] < 0) continue;
        for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
          const int32_t l = labels[indices[e]];
          if (l < 0) continue;
          ++c;
          s += l == labels[v];
        }
      }
      same += s;
      counted += c;
    });
  });
  return counted > 0 ? static_cast<double>(same) / static_cast<double>(counted) : 0.0;
}

}  // namespace dgcn
