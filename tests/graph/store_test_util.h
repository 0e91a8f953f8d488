// Helpers of the .gcn tests: whole-file byte access,
// store variants (int64 ids, multi-label, bare) and a store digest.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/digest.h"
#include "fixtures.h"
#include "graph/store_format.h"
#include "scratch_dir.h"

namespace dgcn::testing {

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The same store with int64 CSR indices.
inline GraphStore with_int64_ids(GraphStore s) {
  auto narrow = s.graph.indices<int32_t>();
  std::vector<int64_t> wide(narrow.begin(), narrow.end());
  s.graph = Csr(s.num_nodes(), s.graph.indptr_buffer(), Buffer::from_vector(std::move(wide)), IdWidth::k64);
  return s;
}

// The same store with a multi-label task: node v has classes v % C and 3v % C.
inline GraphStore with_multi_labels(GraphStore s, int64_t num_classes = 11) {
  s.task = Task::kMultiLabel;
  s.num_classes = num_classes;
  const int64_t row = s.label_row_bytes();
  std::vector<uint8_t> bits(static_cast<size_t>(s.num_nodes() * row), 0);
  for (int64_t v = 0; v < s.num_nodes(); ++v) {
    for (int64_t c : {v % num_classes, (3 * v) % num_classes})
      bits[v * row + c / 8] |= uint8_t(1u << (c % 8));
  }
  s.labels = Buffer::from_vector(std::move(bits));
  return s;
}

// Only the graph: no features, no labels, no splits.
inline GraphStore bare(const EdgeList& edges) {
  GraphStore s;
  s.graph = build_csr(edges.num_nodes, edges.src, edges.dst, EdgeOptions{}, 2, "bare");
  s.degree = degrees_of(s.graph, 2);
  return s;
}

// Digest of every scalar and array of a store.
inline std::string digest_of(const GraphStore& s) {
  Digest d;
  for (int64_t v : {s.num_nodes(), s.num_edges(), s.num_features, s.num_classes}) d.update_value(v);
  d.update_value(static_cast<int>(s.task));
  d.update_value(static_cast<int>(s.graph.id_width()));
  for (const Buffer* b : {&s.graph.indptr_buffer(), &s.graph.indices_buffer(), &s.features, &s.labels,
                          &s.train, &s.valid, &s.test, &s.degree}) {
    d.update_value(b->size());
    d.update(b->data(), b->size());
  }
  d.update(s.metadata_json.data(), s.metadata_json.size());
  return d.hex();
}

// The message of the dgcn::Error `f` throws, or "" when it does not throw.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace dgcn::testing
