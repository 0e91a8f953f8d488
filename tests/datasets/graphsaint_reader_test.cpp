#include "datasets/graphsaint_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "dataset_files.h"

namespace dgcn::datasets {
namespace {

using testing::error_of;
using testing::TempDir;

// The 8-node fixture graph (tests/fixtures.h) in the GraphSAINT layout,
// adj_full.npz symmetric as GraphSAINT ships it. Node v has features
// (v, -v) and classes {v % 3, 3} of 4 (multi-hot); `extra` runs after the
// fixture is written, to break it.
void write_graphsaint(const TempDir& dir, bool compressed, bool multi_label, const std::string& extra = "") {
  testing::run_python(std::string(R"(
import json, numpy as np, scipy.sparse as sp
edges = [(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (5, 6), (6, 7), (7, 5)]
r = [a for a, b in edges] + [b for a, b in edges]
c = [b for a, b in edges] + [a for a, b in edges]
adj = sp.csr_matrix((np.ones(len(r), dtype=np.float32), (r, c)), shape=(8, 8))
sp.save_npz('adj_full.npz', adj, compressed=)") +
                          (compressed ? "True" : "False") + R"()
np.save('feats.npy', np.stack([np.arange(8), -np.arange(8)], axis=1).astype(np.float64))
multi = )" + (multi_label ? "True" : "False") +
                          R"(
cm = {str(v): ([int(c == v % 3 or c == 3) for c in range(4)] if multi else v % 3) for v in range(8)}
json.dump(cm, open('class_map.json', 'w'))
json.dump({'tr': [3, 0, 1], 'va': [4, 5], 'te': [7, 6]}, open('role.json', 'w'))
)" + extra,
                      dir.path());
}

GraphStore read(const TempDir& dir) {
  GraphSaintOptions options;
  options.root = dir.path().string();
  options.num_threads = 2;
  return read_graphsaint(options);
}

std::string error_for(const std::string& extra, bool multi_label = true) {
  TempDir dir;
  write_graphsaint(dir, true, multi_label, extra);
  return error_of([&] { read(dir); });
}

TEST(GraphSaintReader, ReadsCompressedAndStoredAdjacency) {
  for (bool compressed : {true, false}) {
    TempDir dir;
    write_graphsaint(dir, compressed, true);
    GraphStore s = read(dir);
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
  GraphStore s = read(dir);
  EXPECT_EQ(s.task, Task::kSingleLabel);
  EXPECT_EQ(s.num_classes, 3);
  EXPECT_EQ(s.label(5), 2);
}

TEST(GraphSaintReader, ClassMapProblemsAreNamed) {
  std::string err = error_for("cm['8'] = cm['0']\njson.dump(cm, open('class_map.json', 'w'))\n");
  EXPECT_NE(err.find("class_map.json: key '8' is not a node id in [0, 8)"), std::string::npos) << err;
  err = error_for("del cm['5']\njson.dump(cm, open('class_map.json', 'w'))\n");
  EXPECT_NE(err.find("class_map.json: node 5 has no entry"), std::string::npos) << err;
  err = error_for("cm['2'] = [1, 0]\njson.dump(cm, open('class_map.json', 'w'))\n");
  EXPECT_NE(err.find("class_map.json: node 2 has 2 classes, node 0 has 4"), std::string::npos) << err;
  err = error_for("cm['3'] = [1, 2, 0, 0]\njson.dump(cm, open('class_map.json', 'w'))\n");
  EXPECT_NE(err.find("class_map.json: node 3: class 1 is 2, expected 0 or 1"), std::string::npos) << err;
  err = error_for("cm['3'] = 1\njson.dump(cm, open('class_map.json', 'w'))\n");
  EXPECT_NE(err.find("node 3 has a single class but node 0 has a class list"), std::string::npos) << err;
  err = error_for("open('class_map.json', 'w').write('{\"0\": [1, 0, 0, 1], \"1\": [0, ')\n");
  EXPECT_NE(err.find("class_map.json: invalid JSON at byte"), std::string::npos) << err;
  err = error_for("open('class_map.json', 'w').write('{\"0\": 1, \"0\": 2}')\n", false);
  EXPECT_NE(err.find("class_map.json: node 0 appears twice"), std::string::npos) << err;
}

TEST(GraphSaintReader, AdjacencyFeatureAndRoleProblemsAreNamed) {
  // indptr that decreases (written by hand: scipy would refuse it).
  std::string err = error_for(R"(
np.savez('adj_full.npz', data=adj.data, indices=adj.indices, indptr=np.array([0, 2, 4, 3, 8, 9, 11, 13, 16], dtype=np.int32),
         shape=np.array([8, 8]), format=np.array('csr', dtype='S3'))
)");
  EXPECT_NE(err.find("adj_full.npz: indptr decreases at row 2 (4 then 3)"), std::string::npos) << err;
  err = error_for(R"(
bad = adj.indices.copy(); bad[5] = 12
np.savez('adj_full.npz', data=adj.data, indices=bad, indptr=adj.indptr, shape=np.array([8, 8]), format=np.array('csr', dtype='S3'))
)");
  EXPECT_NE(err.find("adj_full.npz: indices[5] = 12 is not a column id in [0, 8)"), std::string::npos) << err;
  err = error_for("f = np.load('feats.npy'); f[4, 1] = np.nan; np.save('feats.npy', f)\n");
  EXPECT_NE(err.find("feats.npy: element [4, 1] is nan, features must be finite"), std::string::npos) << err;
  err = error_for("np.save('feats.npy', np.zeros((7, 2)))\n");
  EXPECT_NE(err.find("feats.npy: shape (7, 2), expected (8, F) for 8 nodes"), std::string::npos) << err;
  err = error_for("json.dump({'tr': [0, 9], 'va': [], 'te': []}, open('role.json', 'w'))\n");
  EXPECT_NE(err.find("role.json: 'tr' holds node id 9, not in [0, 8)"), std::string::npos) << err;
  err = error_for("import os; os.remove('feats.npy')\n");
  EXPECT_NE(err.find("feats.npy: cannot open"), std::string::npos) << err;
}

}  // namespace
}  // namespace dgcn::datasets
