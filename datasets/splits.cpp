#include "datasets/splits.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "datasets/csv.h"

namespace dgcn {

namespace {

constexpr const char* kForms =
    "expected 'per-class:K,valid:V,test:T' (e.g. per-class:20,valid:500,test:1000), "
    "'ratio:TRAIN,VALID,TEST' (e.g. ratio:0.6,0.2,0.2) or 'none'";

// SplitMix64: a tiny generator with a fixed, documented output sequence, so
// splits do not depend on the standard library's distributions.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift with rejection).
  uint64_t below(uint64_t bound) {
    for (;;) {
      unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
      uint64_t low = static_cast<uint64_t>(m);
      if (low >= bound || low >= (-bound) % bound) return static_cast<uint64_t>(m >> 64);
    }
  }

 private:
  uint64_t state_;
};

void shuffle(std::vector<int64_t>& v, SplitMix64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::string SplitSpec::to_string() const {
  switch (kind) {
    case kNone:
      return "none";
    case kPerClass:
      return fmt::format("per-class:{},valid:{},test:{}", per_class, valid, test);
    case kRatio:
      return fmt::format("ratio:{},{},{}", train_ratio, valid_ratio, test_ratio);
  }
  return "?";
}

SplitSpec parse_split_spec(const std::string& text) {
  SplitSpec spec;
  if (text == "none") return spec;
  if (text.starts_with("ratio:")) {
    auto parts = split_on(text.substr(6), ',');
    DGCN_CHECK(parts.size() == 3, "split spec '{}': {}", text, kForms);
    double r[3];
    for (int i = 0; i < 3; ++i) {
      DGCN_CHECK(parse_number(std::string_view(parts[i]), r[i]) && r[i] >= 0 && r[i] <= 1,
                 "split spec '{}': ratio '{}' is not a number in [0, 1]", text, parts[i]);
    }
    DGCN_CHECK(r[0] + r[1] + r[2] <= 1 + 1e-9, "split spec '{}': ratios add up to {}, more than 1", text,
               r[0] + r[1] + r[2]);
    spec.kind = SplitSpec::kRatio;
    spec.train_ratio = r[0];
    spec.valid_ratio = r[1];
    spec.test_ratio = r[2];
    return spec;
  }
  auto parts = split_on(text, ',');
  DGCN_CHECK(parts.size() == 3, "split spec '{}': {}", text, kForms);
  const char* names[] = {"per-class:", "valid:", "test:"};
  int64_t values[3];
  for (int i = 0; i < 3; ++i) {
    DGCN_CHECK(parts[i].starts_with(names[i]), "split spec '{}': {}", text, kForms);
    std::string_view number = std::string_view(parts[i]).substr(std::string_view(names[i]).size());
    DGCN_CHECK(parse_number(number, values[i]) && values[i] >= 0, "split spec '{}': '{}' is not a count >= 0",
               text, number);
  }
  spec.kind = SplitSpec::kPerClass;
  spec.per_class = values[0];
  spec.valid = values[1];
  spec.test = values[2];
  return spec;
}

Splits make_splits(const SplitSpec& spec, int64_t num_nodes, std::span<const int32_t> labels,
                   int64_t num_classes, uint64_t seed) {
  Splits out;
  if (spec.kind == SplitSpec::kNone) return out;
  DGCN_CHECK(labels.empty() || static_cast<int64_t>(labels.size()) == num_nodes,
             "split: {} labels for {} nodes", labels.size(), num_nodes);
  SplitMix64 rng(seed);
  // Candidates: labelled nodes (all nodes when there are no labels), ascending.
  std::vector<int64_t> pool;
  for (int64_t v = 0; v < num_nodes; ++v) {
    if (labels.empty() || labels[v] >= 0) pool.push_back(v);
  }

  if (spec.kind == SplitSpec::kPerClass) {
    DGCN_CHECK(!labels.empty() && num_classes > 0,
               "split spec {}: needs single-label classes, this graph has none", spec.to_string());
    std::vector<std::vector<int64_t>> by_class(static_cast<size_t>(num_classes));
    for (int64_t v : pool) {
      DGCN_CHECK(labels[v] < num_classes, "split: label of node {} is {}, not below {} classes", v, labels[v],
                 num_classes);
      by_class[labels[v]].push_back(v);
    }
    std::vector<uint8_t> taken(static_cast<size_t>(num_nodes), 0);
    for (int64_t c = 0; c < num_classes; ++c) {
      auto& members = by_class[c];
      DGCN_CHECK(static_cast<int64_t>(members.size()) >= spec.per_class,
                 "split spec {}: class {} has {} labelled nodes, fewer than the {} per class asked for",
                 spec.to_string(), c, members.size(), spec.per_class);
      shuffle(members, rng);
      for (int64_t i = 0; i < spec.per_class; ++i) {
        out.train.push_back(members[i]);
        taken[members[i]] = 1;
      }
    }
    std::vector<int64_t> rest;
    for (int64_t v : pool) {
      if (!taken[v]) rest.push_back(v);
    }
    DGCN_CHECK(
        spec.valid + spec.test <= static_cast<int64_t>(rest.size()),
        "split spec {}: {} valid + {} test nodes asked for, but only {} labelled nodes are left after train",
        spec.to_string(), spec.valid, spec.test, rest.size());
    shuffle(rest, rng);
    out.valid.assign(rest.begin(), rest.begin() + spec.valid);
    out.test.assign(rest.begin() + spec.valid, rest.begin() + spec.valid + spec.test);
  } else {
    const int64_t n = static_cast<int64_t>(pool.size());
    shuffle(pool, rng);
    const int64_t n_train = static_cast<int64_t>(std::floor(spec.train_ratio * static_cast<double>(n)));
    const int64_t n_valid = static_cast<int64_t>(std::floor(spec.valid_ratio * static_cast<double>(n)));
    const bool covers_all = std::abs(spec.train_ratio + spec.valid_ratio + spec.test_ratio - 1.0) < 1e-9;
    const int64_t n_test = covers_all
                               ? n - n_train - n_valid
                               : static_cast<int64_t>(std::floor(spec.test_ratio * static_cast<double>(n)));
    DGCN_ASSERT(n_train + n_valid + n_test <= n);
    out.train.assign(pool.begin(), pool.begin() + n_train);
    out.valid.assign(pool.begin() + n_train, pool.begin() + n_train + n_valid);
    out.test.assign(pool.begin() + n_train + n_valid, pool.begin() + n_train + n_valid + n_test);
  }
  std::sort(out.train.begin(), out.train.end());
  std::sort(out.valid.begin(), out.valid.end());
  std::sort(out.test.begin(), out.test.end());
  return out;
}

}  // namespace dgcn
