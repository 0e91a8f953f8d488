// Small hand-checkable graphs shared by the tests: a cycle, a star, a clique
// and a hand-drawn 8-node graph, each as an undirected edge list and as a
// ready GraphStore (CSR built with the default clean-ups).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn::testing {

// Write access to an array of a store built in memory, for a test that
// damages the store to see a reader refuse it. A store's arrays are read-only
// Buffers (base/buffer.h); only such tests write them, never a mapped one.
template <class T>
std::span<T> damage(const Buffer& b) {
  const std::span<const T> v = b.as<T>();
  return {const_cast<T*>(v.data()), v.size()};
}

struct EdgeList {
  int64_t num_nodes = 0;
  std::vector<int64_t> src, dst;
  void add(int64_t s, int64_t d) {
    src.push_back(s);
    dst.push_back(d);
  }
};

// 0 - 1 - 2 - ... - (n-1) - 0
inline EdgeList cycle_edges(int64_t n) {
  EdgeList e{n, {}, {}};
  for (int64_t v = 0; v < n; ++v) e.add(v, (v + 1) % n);
  return e;
}

// Centre 0 joined to leaves 1..n-1.
inline EdgeList star_edges(int64_t n) {
  EdgeList e{n, {}, {}};
  for (int64_t v = 1; v < n; ++v) e.add(0, v);
  return e;
}

// Every pair of distinct nodes.
inline EdgeList clique_edges(int64_t n) {
  EdgeList e{n, {}, {}};
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = a + 1; b < n; ++b) e.add(a, b);
  return e;
}

// m edges between uniformly random endpoints (self loops and duplicates
// included), from `seed`.
inline EdgeList random_edges(int64_t n, int64_t m, uint64_t seed) {
  EdgeList e{n, {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  for (int64_t i = 0; i < m; ++i) e.add(pick(rng), pick(rng));
  return e;
}

// Whether `part` occurs in `s` (an error message, a log).
inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Two components: a square with a tail, and a triangle.
//
//   0 --- 1        5
//   |     |       / |
//   3 --- 2 -- 4 6--7      (4 hangs off 2; 5-6-7 is a separate triangle)
inline EdgeList eight_node_edges() {
  EdgeList e{8, {}, {}};
  for (auto [s, d] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 1}, {1, 2}, {2, 3}, {3, 0}, {2, 4}, {5, 6}, {6, 7}, {7, 5}}) {
    e.add(s, d);
  }
  return e;
}

// A store over `edges` with `f` features per node (value = node + column / 10),
// single-label classes v % num_classes, and the first half of the nodes in
// train, the next quarter in valid, the rest in test.
GraphStore make_store(const EdgeList& edges, int64_t f = 4, int64_t num_classes = 3);

// 400 nodes in 4 communities (dense inside, sparse across); features are the
// community's one-hot code buried in noise, so a GCN (which averages the
// noise away over neighbours) beats a features-only model. Splits as
// make_store (200 / 100 / 100). Multi-label: node v has class v % 4, and
// class 3 also when v is even.
GraphStore community_store(Task task = Task::kSingleLabel);

}  // namespace dgcn::testing
