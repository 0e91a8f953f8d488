#include "datasets/npz_reader.h"

#include <gtest/gtest.h>

#include <set>

#include "ci_skip.h"
#include "dataset_files.h"

namespace dgcn {
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
  if (cora.empty()) DGCN_SKIP_OUTSIDE_CI("../shared/datasets/cora.npz is absent");
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
  if (citeseer.empty()) DGCN_SKIP_OUTSIDE_CI("../shared/datasets/citeseer.npz is absent");
  GraphStore s = read_npz_dataset(options_for(citeseer));
  EXPECT_EQ(s.num_nodes(), 3312);
  EXPECT_EQ(s.num_edges(), 9072);  // 124 self-loops dropped, symmetrized, deduplicated
  EXPECT_EQ(s.num_features, 3703);
  EXPECT_EQ(s.num_classes, 6);
  EXPECT_EQ(s.train_nodes().size(), 120u);
}

// A 5-node path 0-1-2-3-4 in the gnn-benchmark layout, dense features,
// labels [0, 1, 0, 1, -1], plus the text arrays real files carry; `extra`
// changes `arrays` before they are saved to g.npz.
std::string npz_script(const std::string& extra = "") {
  return R"(
import numpy as np, scipy.sparse as sp
adj = sp.csr_matrix((np.ones(4, dtype=np.float32), ([0, 1, 2, 3], [1, 2, 3, 4])), shape=(5, 5))
arrays = dict(adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr, adj_shape=np.array(adj.shape),
              attr_matrix=np.arange(10, dtype=np.float32).reshape(5, 2), labels=np.array([0, 1, 0, 1, -1]),
              node_names=np.array(['a', 'b', 'c', 'd', 'e']), class_names=np.array(['x', 'y']))
)" + extra +
         "np.savez('g.npz', **arrays)\n";
}

TEST(NpzSynthetic, ReadsDenseFeaturesAndMakesARatioSplit) {
  TempDir dir;
  testing::run_python(npz_script(), dir.path());
  NpzOptions o = options_for(dir / "g.npz");
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

TEST(NpzSynthetic, BadArraysAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"adj_indices[2] = 7 is not a column id in [0, 5)",
       "arrays['adj_indices'] = np.array([1, 2, 7, 4], dtype=np.int32)\n"},
      {"adj_indptr decreases at row 2 (3 then 2)",
       "arrays['adj_indptr'] = np.array([0, 1, 3, 2, 4, 4], dtype=np.int32)\n"},
      {"adj_indptr has shape (5,), expected (6,) for 5 rows",
       "arrays['adj_indptr'] = np.array([0, 1, 2, 3, 4], dtype=np.int32)\n"},
      {"feature [node 2, column 1] is inf", "arrays['attr_matrix'][2, 1] = np.inf\n"},
      {"labels: expected an integer array, got dtype '<f8'",
       "arrays['labels'] = np.array([0.5, 1, 0, 1, 0])\n"},
      // Fuzz findings: a shape of INT64_MAX rows (rows + 1 overflowed), and
      // a sparse shape whose dense form no memory holds (allocated before).
      {"adj_indptr has shape (6,), expected (9223372036854775808,) for 9223372036854775807 rows",
       "arrays['adj_shape'] = np.array([2**63 - 1, 5])\n"},
      {"attr_shape: a dense 5 x 1099511627776 float32 matrix needs 21990.2 GB, more than the",
       "x = sp.csr_matrix(arrays.pop('attr_matrix'))\n"
       "arrays.update(attr_data=x.data, attr_indices=x.indices, attr_indptr=x.indptr,\n"
       "              attr_shape=np.array([5, 2**40]))\n"},
      {"no array 'adj_shape' (arrays: adj_data, adj_indices, adj_indptr, attr_matrix",
       "del arrays['adj_shape']\n"},
      // the default Planetoid split needs 20 nodes per class
      {"split spec per-class:20,valid:500,test:1000: class 0 has 2 labelled nodes, fewer than the 20 per "
       "class "
       "asked for",
       ""},
  };
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> variants;
  for (size_t i = 0; i < cases.size(); ++i)
    variants.emplace_back("case" + std::to_string(i), npz_script(cases[i].second));
  testing::run_python_variants(variants, dir.path());
  for (size_t i = 0; i < cases.size(); ++i) {
    NpzOptions o;
    o.file = dir / ("case" + std::to_string(i) + "/g.npz");
    std::string err = error_of([&] { read_npz_dataset(o); });
    EXPECT_NE(err.find("g.npz: " + cases[i].first), std::string::npos) << err;
  }
  NpzOptions one_class;
  one_class.file = dir / "case8/g.npz";
  one_class.num_classes = 1;
  one_class.split = parse_split_spec("none");
  std::string err = error_of([&] { read_npz_dataset(one_class); });
  EXPECT_NE(err.find("g.npz: labels[1] is 1, not below num_classes 1"), std::string::npos) << err;
}

}  // namespace
}  // namespace dgcn
