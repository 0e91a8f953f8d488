// Train/valid/test splits for datasets that ship none (gnn-benchmark .npz,
// edge lists), made from a seed so the same (spec, labels, seed) always gives
// the same split, on any machine and thread count.
//
//   per-class:20,valid:500,test:1000   Planetoid protocol: 20 random labelled
//                                      nodes of every class to train, then 500
//                                      valid and 1000 test from the other
//                                      labelled nodes
//   ratio:0.6,0.2,0.2                  shuffle the labelled nodes (all nodes
//                                      when there are no labels) and cut
//   none                               no split
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dgcn {

struct SplitSpec {
  enum Kind { kNone, kPerClass, kRatio } kind = kNone;
  int64_t per_class = 0, valid = 0, test = 0;               // kPerClass
  double train_ratio = 0, valid_ratio = 0, test_ratio = 0;  // kRatio

  std::string to_string() const;  // the canonical spec text
};

// Parses the --split text; errors quote it and show the accepted forms.
SplitSpec parse_split_spec(const std::string& text);

struct Splits {
  std::vector<int64_t> train, valid, test;  // each sorted, pairwise disjoint
};

// `labels`: single-label classes in [0, num_classes) or -1 (unlabelled, never
// put in a split); empty when the graph has no labels (ratio over all
// `num_nodes` nodes; per-class needs labels). A class with fewer labelled
// nodes than per-class asks for, or too few nodes left for valid + test, is an
// error naming the counts.
Splits make_splits(const SplitSpec& spec, int64_t num_nodes, std::span<const int32_t> labels,
                   int64_t num_classes, uint64_t seed);

}  // namespace dgcn
