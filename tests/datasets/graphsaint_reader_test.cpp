#include "datasets/graphsaint_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

// The 8-node fixture graph (tests/fixtures.h) in the GraphSAINT layout,
// adj_full.npz symmetric as GraphSAINT ships it. Node v has features
// (v, -v) and classes {v % 3, 3} of 4 (multi-hot); `extra` runs after the
// fixture is written, to break it.
std::string graphsaint_script(bool compressed, bool multi_label, const std::string& extra = "") {
  return std::string(R"(
import json, numpy as np, scipy.sparse as sp
edges = [(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (5, 6), (6, 7), (7, 5)]
r = [a for a, b in edges] + [b for a, b in edges]
c = [b for a, b in edges] + [a for a, b in edges]
adj = sp.csr_matrix((np.ones(len(r), dtype=np.float32), (r, c)), shape=(8, 8))
sp.save_npz('adj_full.npz', adj, compressed=)") +
         (compressed ? "True" : "False") + R"()
np.save('feats.npy', np.stack([np.arange(8), -np.arange(8)], axis=1).astype(np.float64))
multi = )" +
         (multi_label ? "True" : "False") +
         R"(
cm = {str(v): ([int(c == v % 3 or c == 3) for c in range(4)] if multi else v % 3) for v in range(8)}
json.dump(cm, open('class_map.json', 'w'))
json.dump({'tr': [3, 0, 1], 'va': [4, 5], 'te': [7, 6]}, open('role.json', 'w'))
)" + extra;
}

void write_graphsaint(const TempDir& dir, bool compressed, bool multi_label) {
  testing::run_python(graphsaint_script(compressed, multi_label), dir.path());
}

GraphStore read(const std::filesystem::path& root) {
  GraphSaintOptions options;
  options.root = root.string();
  options.num_threads = 2;
  return read_graphsaint(options);
}

// Writes one broken fixture per entry of `extras` (name -> python that breaks
// it, run after the fixture is written) with one python start, and returns
// the reader's error for each.
std::map<std::string, std::string> errors_for(const std::map<std::string, std::string>& extras,
                                              bool multi_label = true) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> variants;
  for (const auto& [name, extra] : extras)
    variants.emplace_back(name, graphsaint_script(true, multi_label, extra));
  testing::run_python_variants(variants, dir.path());
  std::map<std::string, std::string> errors;
  for (const auto& entry : extras) {
    const std::string& name = entry.first;  // a named reference: lambdas cannot capture structured bindings
    errors[name] = error_of([&] { read(dir.path() / name); });
  }
  return errors;
}

TEST(GraphSaintReader, ReadsCompressedAndStoredAdjacency) {
  for (bool compressed : {true, false}) {
    TempDir dir;
    write_graphsaint(dir, compressed, true);
    GraphStore s = read(dir.path());
    EXPECT_EQ(s.num_nodes(), 8);
    EXPECT_EQ(s.num_edges(), 16);
    EXPECT_EQ(s.degrees()[2], 3);
    ASSERT_EQ(s.num_features, 2);
    EXPECT_FLOAT_EQ(s.features_of(6)[1], -6.0f);
    EXPECT_EQ(s.task, Task::kMultiLabel);
    EXPECT_EQ(s.num_classes, 4);
    for (int v = 0; v < 8; ++v) {
      for (int c = 0; c < 4; ++c) EXPECT_EQ(s.has_label(v, c), c == v % 3 || c == 3) << v << "," << c;
    }
    EXPECT_EQ(std::vector<int64_t>(s.train_nodes().begin(), s.train_nodes().end()),
              (std::vector<int64_t>{0, 1, 3}));
    EXPECT_EQ(std::vector<int64_t>(s.test_nodes().begin(), s.test_nodes().end()),
              (std::vector<int64_t>{6, 7}));
  }
}

TEST(GraphSaintReader, ReadsSingleLabelClassMap) {
  TempDir dir;
  write_graphsaint(dir, true, false);
  GraphStore s = read(dir.path());
  EXPECT_EQ(s.task, Task::kSingleLabel);
  EXPECT_EQ(s.num_classes, 3);
  EXPECT_EQ(s.label(5), 2);
}

TEST(GraphSaintReader, ClassMapProblemsAreNamed) {
  const std::string dump = "json.dump(cm, open('class_map.json', 'w'))\n";
  auto err = errors_for({
      {"out_of_range", "cm['8'] = cm['0']\n" + dump},
      {"missing", "del cm['5']\n" + dump},
      {"short_list", "cm['2'] = [1, 0]\n" + dump},
      {"not_binary", "cm['3'] = [1, 2, 0, 0]\n" + dump},
      {"mixed", "cm['3'] = 1\n" + dump},
      {"cut", "open('class_map.json', 'w').write('{\"0\": [1, 0, 0, 1], \"1\": [0, ')\n"},
  });
  auto expect_has = [&](const std::string& name, const std::string& text) {
    EXPECT_NE(err[name].find(text), std::string::npos) << name << ": " << err[name];
  };
  expect_has("out_of_range", "class_map.json: key '8' is not a node id in [0, 8)");
  expect_has("missing", "class_map.json: node 5 has no entry");
  expect_has("short_list", "class_map.json: node 2 has 2 classes, node 0 has 4");
  expect_has("not_binary", "class_map.json: node 3: class 1 is 2, expected 0 or 1");
  expect_has("mixed", "node 3 has a single class but node 0 has a class list");
  expect_has("cut", "class_map.json: invalid JSON at byte");

  auto single = errors_for({{"twice", "open('class_map.json', 'w').write('{\"0\": 1, \"0\": 2}')\n"}}, false);
  EXPECT_NE(single["twice"].find("class_map.json: node 0 appears twice"), std::string::npos)
      << single["twice"];
}

TEST(GraphSaintReader, AdjacencyFeatureAndRoleProblemsAreNamed) {
  auto err = errors_for({
      // indptr that decreases (written by hand: scipy would refuse it)
      {"indptr", R"(
np.savez('adj_full.npz', data=adj.data, indices=adj.indices, indptr=np.array([0, 2, 4, 3, 8, 9, 11, 13, 16], dtype=np.int32),
         shape=np.array([8, 8]), format=np.array('csr', dtype='S3'))
)"},
      {"indices", R"(
bad = adj.indices.copy(); bad[5] = 12
np.savez('adj_full.npz', data=adj.data, indices=bad, indptr=adj.indptr, shape=np.array([8, 8]), format=np.array('csr', dtype='S3'))
)"},
      {"nan", "f = np.load('feats.npy'); f[4, 1] = np.nan; np.save('feats.npy', f)\n"},
      {"feat_rows", "np.save('feats.npy', np.zeros((7, 2)))\n"},
      {"role", "json.dump({'tr': [0, 9], 'va': [], 'te': []}, open('role.json', 'w'))\n"},
      {"no_feats", "import os; os.remove('feats.npy')\n"},
  });
  auto expect_has = [&](const std::string& name, const std::string& text) {
    EXPECT_NE(err[name].find(text), std::string::npos) << name << ": " << err[name];
  };
  expect_has("indptr", "adj_full.npz: indptr decreases at row 2 (4 then 3)");
  expect_has("indices", "adj_full.npz: indices[5] = 12 is not a column id in [0, 8)");
  expect_has("nan", "feats.npy: element [4, 1] is nan, features must be finite");
  expect_has("feat_rows", "feats.npy: shape (7, 2), expected (8, F) for 8 nodes");
  expect_has("role", "role.json: 'tr' holds node id 9, not in [0, 8)");
  expect_has("no_feats", "feats.npy: cannot open");
}

}  // namespace
}  // namespace dgcn
