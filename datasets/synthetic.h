// A synthetic products-like graph: a power-law, homophilous, single-label
// node-classification dataset with class-conditional features, made from a
// spec and a seed. It stands in for ogbn-products (same sizes, similar degree
// skew and edge homophily) where the real data is not at hand, and the small
// presets make fast, realistic test and demo data.
//
// Model (Chung-Lu with classes):
//   - node v gets a class c(v) with P(c) ∝ (c + 1)^-class_skew (class 0 largest)
//     and a weight w(v) ~ Pareto(degree_exponent), capped at max_weight_ratio
//     times the smallest weight; a node's expected degree is ∝ its weight;
//   - each undirected edge picks its source by weight; with probability
//     q its destination is a node of the source's class, by weight, else any
//     node by weight ("class" here is the graph class, see ambiguous nodes
//     below). q is solved so that the expected edge homophily (the fraction of
//     CSR entries joining two nodes of one label) is `homophily`;
//   - the edges are symmetrized, self-loops and duplicates dropped; the edge
//     count is solved beforehand so the mean degree after that lands on
//     mean_degree;
//   - every node also has a decoy class (another class, at random); the
//     lightest ambiguous_fraction of nodes are ambiguous: their edges are
//     drawn as if the decoy were their class, so neither features nor
//     neighbours reveal their label (GCN accuracy is capped near
//     1 - ambiguous_fraction);
//   - features: every class has a random mean vector (N(0, 1) per feature);
//     node v's row is that mean plus N(0, feature_noise^2) noise, scaled to unit
//     variance, except for ambiguous nodes and a misleading_fraction of the
//     others, whose row is drawn around their decoy's mean: a features-only
//     model cannot get those right, a model that reads the neighbours can get
//     the misleading ones;
//   - random train/valid/test splits of the given fractions.
//
// Every random draw comes from a counter-based stream keyed by (seed, stream,
// chunk) (base/random.h) over fixed-size chunks, so the store is bit-identical
// for any thread count.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph_store.h"

namespace dgcn {

struct SyntheticSpec {
  std::string name = "custom";     // the preset it came from (recorded in the metadata)
  int64_t num_nodes = 0;           // 1 .. 2^31 - 1
  double mean_degree = 0;          // directed CSR entries per node, after symmetrize + dedupe
  int64_t num_features = 0;        // 0 = no features
  int64_t num_classes = 1;         // >= 1
  double degree_exponent = 2.5;    // gamma of the weight power law P(w) ∝ w^-gamma, > 1
  double max_weight_ratio = 1000;  // cap of a node's weight over the smallest weight, >= 1
  double class_skew = 1.0;         // Zipf exponent of the class sizes, >= 0 (0 = equal sizes)
  double homophily = 0.8;          // target edge homophily, in [0, 1]
  // Ambiguous nodes: the lightest ambiguous_fraction of nodes (smallest weights)
  // have a decoy class that both their edges and their features follow, so no
  // model can tell their label: this caps every model's accuracy near
  // 1 - ambiguous_fraction (GCN on ogbn-products reaches ~0.76). In [0, 1].
  double ambiguous_fraction = 0.24;
  // Misleading nodes (of all nodes, drawn among the others): features drawn
  // around another class's mean, edges true to their class, so only a model
  // that reads the neighbours gets them. ambiguous + misleading <= 1.
  // 0.06 with noise 2.2: on "small" a features-only model (0 hops, 3 layers)
  // reaches 0.61 test accuracy and a 3-layer GCN 0.76 (ogbn-products: MLP
  // 0.61, GCN 0.76).
  double misleading_fraction = 0.06;
  double feature_noise = 2.2;    // std of the feature noise around a class mean (means have std 1)
  double train_fraction = 0.08;  // split fractions, each in [0, 1], sum <= 1
  double valid_fraction = 0.016;
  double test_fraction = 0.904;
  uint64_t seed = 0;
};

// "tiny" (3,000 nodes, tests), "small" (100,000 nodes, demos) and "products"
// (2,449,029 nodes, mean degree 50.5 = ~123.7 M CSR entries, 100 features,
// 47 classes, split 8% / 1.6% / 90.4% like ogbn-products). Throws dgcn::Error
// naming an unknown preset and listing the valid ones.
SyntheticSpec synthetic_preset(const std::string& name);

// Checks every field; throws dgcn::Error naming the field and its value.
void validate_synthetic_spec(const SyntheticSpec& spec);

// Generates the store (validated spec first). num_threads 0 = every core;
// the result does not depend on it. metadata_json records the generator,
// every spec field, the solved edge count and same-class probability, and the
// measured edge homophily.
GraphStore generate_synthetic(const SyntheticSpec& spec, int num_threads);

// The fraction of CSR entries (u, v) with label(u) == label(v), over entries
// whose two ends are labelled; single-label stores only (0 without edges).
double edge_homophily(const GraphStore& store, int num_threads);

}  // namespace dgcn
