#include "datasets/splits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;

// 7 classes of 100 nodes each (node v has class v % 7), plus 50 unlabelled nodes at the end.
std::vector<int32_t> labels_700() {
  std::vector<int32_t> l(750, -1);
  for (int v = 0; v < 700; ++v) l[v] = v % 7;
  return l;
}

void expect_sorted_disjoint(const Splits& s) {
  for (const auto* part : {&s.train, &s.valid, &s.test}) {
    EXPECT_TRUE(std::is_sorted(part->begin(), part->end()));
    EXPECT_EQ(std::adjacent_find(part->begin(), part->end()), part->end());
  }
  std::set<int64_t> all(s.train.begin(), s.train.end());
  all.insert(s.valid.begin(), s.valid.end());
  all.insert(s.test.begin(), s.test.end());
  EXPECT_EQ(all.size(), s.train.size() + s.valid.size() + s.test.size());
}

TEST(Splits, ParsesTheSpecForms) {
  SplitSpec p = parse_split_spec("per-class:20,valid:500,test:1000");
  EXPECT_EQ(p.kind, SplitSpec::kPerClass);
  EXPECT_EQ(p.per_class, 20);
  EXPECT_EQ(p.valid, 500);
  EXPECT_EQ(p.test, 1000);
  EXPECT_EQ(p.to_string(), "per-class:20,valid:500,test:1000");
  SplitSpec r = parse_split_spec("ratio:0.6,0.2,0.2");
  EXPECT_EQ(r.kind, SplitSpec::kRatio);
  EXPECT_DOUBLE_EQ(r.train_ratio, 0.6);
  EXPECT_EQ(parse_split_spec("none").kind, SplitSpec::kNone);
  EXPECT_NE(error_of([] { parse_split_spec("ratio:0.6,0.5,0.2"); }).find("add up to 1.3"), std::string::npos);
  EXPECT_NE(error_of([] { parse_split_spec("per-class:x,valid:1,test:1"); }).find("'x' is not a count"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_split_spec("random"); }).find("split spec 'random': expected"),
            std::string::npos);
}

TEST(Splits, PerClassTakesExactCountsFromLabelledNodes) {
  auto labels = labels_700();
  Splits s = make_splits(parse_split_spec("per-class:20,valid:100,test:300"), 750, labels, 7, 1);
  expect_sorted_disjoint(s);
  ASSERT_EQ(s.train.size(), 140u);
  std::vector<int> per_class(7, 0);
  for (int64_t v : s.train) per_class[labels[v]]++;
  EXPECT_EQ(per_class, std::vector<int>(7, 20));
  EXPECT_EQ(s.valid.size(), 100u);
  EXPECT_EQ(s.test.size(), 300u);
  for (const auto* part : {&s.train, &s.valid, &s.test}) {
    for (int64_t v : *part) EXPECT_GE(labels[v], 0) << "unlabelled node " << v << " in a split";
  }
}

TEST(Splits, DeterministicForASeedAndDifferentForAnother) {
  auto labels = labels_700();
  SplitSpec spec = parse_split_spec("per-class:20,valid:100,test:300");
  Splits a = make_splits(spec, 750, labels, 7, 42);
  Splits b = make_splits(spec, 750, labels, 7, 42);
  Splits c = make_splits(spec, 750, labels, 7, 43);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.test, b.test);
  EXPECT_NE(a.train, c.train);
  EXPECT_NE(a.test, c.test);
}

TEST(Splits, RatioCutsTheShuffledPool) {
  auto labels = labels_700();
  Splits s = make_splits(parse_split_spec("ratio:0.6,0.2,0.2"), 750, labels, 7, 3);
  expect_sorted_disjoint(s);
  EXPECT_EQ(s.train.size(), 420u);
  EXPECT_EQ(s.valid.size(), 140u);
  EXPECT_EQ(s.test.size(), 140u);  // 700 labelled nodes, every one placed
  Splits partial = make_splits(parse_split_spec("ratio:0.1,0.1,0.1"), 100, {}, 0, 3);  // no labels: all nodes
  EXPECT_EQ(partial.train.size(), 10u);
  EXPECT_EQ(partial.test.size(), 10u);
  EXPECT_NE(make_splits(parse_split_spec("ratio:0.6,0.2,0.2"), 750, labels, 7, 4).train, s.train);
}

TEST(Splits, NamesImpossibleRequests) {
  auto labels = labels_700();
  std::string err =
      error_of([&] { make_splits(parse_split_spec("per-class:101,valid:0,test:0"), 750, labels, 7, 1); });
  EXPECT_NE(err.find("class 0 has 100 labelled nodes, fewer than the 101 per class asked for"),
            std::string::npos)
      << err;
  err =
      error_of([&] { make_splits(parse_split_spec("per-class:20,valid:500,test:100"), 750, labels, 7, 1); });
  EXPECT_NE(err.find("500 valid + 100 test nodes asked for, but only 560 labelled nodes are left"),
            std::string::npos)
      << err;
  err = error_of([&] { make_splits(parse_split_spec("per-class:20,valid:5,test:5"), 10, {}, 0, 1); });
  EXPECT_NE(err.find("needs single-label classes"), std::string::npos) << err;
}

}  // namespace
}  // namespace dgcn
