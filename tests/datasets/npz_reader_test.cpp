#include "datasets/npz_reader.h"

#include <gtest/gtest.h>

#include <set>

#include "dataset_files.h"

namespace dgcn::datasets {
namespace {

using testing::error_of;
using testing::TempDir;

NpzOptions options_for(const std::string& file, uint64_t seed = 0) {
  NpzOptions o;
  o.file = file;
  o.num_threads = 2;
  o.seed = seed;
  return o;
}

TEST(NpzReader, ReadsRealCora) {
  const std::string cora = testing::shared_dataset("cora.npz");
  if (cora.empty()) GTEST_SKIP() << "../shared/datasets/cora.npz is absent";
  GraphStore s = read_npz_dataset(options_for(cora, 7));
  EXPECT_EQ(s.num_nodes(), 2708);
  EXPECT_EQ(s.num_edges(), 10556);
  EXPECT_EQ(s.num_features, 1433);
  EXPECT_EQ(s.num_classes, 7);
  EXPECT_EQ(s.train_nodes().size(), 140u);
  EXPECT_EQ(s.valid_nodes().size(), 500u);
  EXPECT_EQ(s.test_nodes().size(), 1000u);
  std::vector<int> per_class(7, 0);
  for (int64_t v : s.train_nodes()) per_class[s.label(v)]++;
  EXPECT_EQ(per_class, std::vector<int>(7, 20));
  // Cora's bag-of-words features are 0/1, 49216 ones in all (attr_data).
  double sum = 0;
  for (float x : s.features.as<float>()) sum += x;
  EXPECT_EQ(sum, 49216.0);
  EXPECT_NE(s.metadata_json.find("node_names"), std::string::npos) << s.metadata_json;  // listed as skipped

  GraphStore again = read_npz_dataset(options_for(cora, 7));
  EXPECT_TRUE(std::equal(s.train_nodes().begin(), s.train_nodes().end(), again.train_nodes().begin()));
  GraphStore other = read_npz_dataset(options_for(cora, 8));
  EXPECT_FALSE(std::equal(s.train_nodes().begin(), s.train_nodes().end(), other.train_nodes().begin()));
}

TEST(NpzReader, ReadsRealCiteseer) {
  const std::string citeseer = testing::shared_dataset("citeseer.npz");
  if (citeseer.empty()) GTEST_SKIP() << "../shared/datasets/citeseer.npz is absent";
  GraphStore s = read_npz_dataset(options_for(citeseer));
  EXPECT_EQ(s.num_nodes(), 3312);
  EXPECT_EQ(s.num_edges(), 9072);  // 124 self-loops dropped, symmetrized, deduplicated
  EXPECT_EQ(s.num_features, 3703);
  EXPECT_EQ(s.num_classes, 6);
  EXPECT_EQ(s.train_nodes().size(), 120u);
}

class NpzSynthetic : public ::testing::Test {
 protected:
  // A 5-node path 0-1-2-3-4 in the gnn-benchmark layout, dense features,
  // labels [0, 1, 0, 1, -1], plus the text arrays real files carry.
  void write(const std::string& extra = "") {
    testing::run_python(R"(
import numpy as np, scipy.sparse as sp
adj = sp.csr_matrix((np.ones(4, dtype=np.float32), ([0, 1, 2, 3], [1, 2, 3, 4])), shape=(5, 5))
arrays = dict(adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr, adj_shape=np.array(adj.shape),
              attr_matrix=np.arange(10, dtype=np.float32).reshape(5, 2), labels=np.array([0, 1, 0, 1, -1]),
              node_names=np.array(['a', 'b', 'c', 'd', 'e']), class_names=np.array(['x', 'y']))
)" + extra + "np.savez('g.npz', **arrays)\n",
                        dir_.path());
  }
  std::string error(const std::string& extra, NpzOptions o = {}) {
    write(extra);
    o.file = dir_ / "g.npz";
    return error_of([&] { read_npz_dataset(o); });
  }
  TempDir dir_;
};

TEST_F(NpzSynthetic, ReadsDenseFeaturesAndMakesARatioSplit) {
  write();
  NpzOptions o = options_for(dir_ / "g.npz");
  o.split = parse_split_spec("ratio:0.5,0.25,0.25");
  GraphStore s = read_npz_dataset(o);
  EXPECT_EQ(s.num_edges(), 8);
  EXPECT_FLOAT_EQ(s.features_of(3)[1], 7.0f);
  EXPECT_EQ(s.num_classes, 2);
  EXPECT_EQ(s.label(4), -1);
  EXPECT_EQ(s.train_nodes().size() + s.valid_nodes().size() + s.test_nodes().size(), 4u);  // 4 labelled
  for (auto part : {s.train_nodes(), s.valid_nodes(), s.test_nodes()}) {
    for (int64_t v : part) EXPECT_NE(v, 4);
  }
}

TEST_F(NpzSynthetic, BadArraysAreNamed) {
  std::string err = error("arrays['adj_indices'] = np.array([1, 2, 7, 4], dtype=np.int32)\n");
  EXPECT_NE(err.find("g.npz: adj_indices[2] = 7 is not a column id in [0, 5)"), std::string::npos) << err;
  err = error("arrays['adj_indptr'] = np.array([0, 1, 3, 2, 4, 4], dtype=np.int32)\n");
  EXPECT_NE(err.find("g.npz: adj_indptr decreases at row 2 (3 then 2)"), std::string::npos) << err;
  err = error("arrays['adj_indptr'] = np.array([0, 1, 2, 3, 4], dtype=np.int32)\n");
  EXPECT_NE(err.find("g.npz: adj_indptr has shape (5,), expected (6,) for 5 rows"), std::string::npos) << err;
  err = error("arrays['attr_matrix'][2, 1] = np.inf\n");
  EXPECT_NE(err.find("g.npz: feature [node 2, column 1] is inf"), std::string::npos) << err;
  NpzOptions two;
  two.num_classes = 1;
  two.split = parse_split_spec("none");
  err = error("", two);
  EXPECT_NE(err.find("g.npz: labels[1] is 1, not below --num-classes 1"), std::string::npos) << err;
  err = error("arrays['labels'] = np.array([0.5, 1, 0, 1, 0])\n");
  EXPECT_NE(err.find("g.npz: labels: expected an integer array, got dtype '<f8'"), std::string::npos) << err;
  err = error("del arrays['adj_shape']\n");
  EXPECT_NE(err.find("g.npz: no array 'adj_shape' (arrays: adj_data, adj_indices, adj_indptr, attr_matrix"),
            std::string::npos)
      << err;
  err = error("");  // the default Planetoid split needs 20 nodes per class
  EXPECT_NE(err.find("class 0 has 2 labelled nodes, fewer than the 20 per class asked for"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace dgcn::datasets
