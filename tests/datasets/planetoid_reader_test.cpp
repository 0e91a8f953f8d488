// The Planetoid reader on fixtures in PyG's raw layout, pickled by Python 3's
// numpy/scipy with protocol 2 (as the original files). The unpickler's own
// rules are in pickle_test.cpp.
#include "datasets/planetoid_reader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

// A Planetoid set in the original layout: 2 training nodes (x, y), allx/ally
// the first n_all nodes, the test nodes' tx/ty rows in test.index order
// (shuffled), a ring for the graph. Node v's feature row is [v, 10 v, 0] and
// its class v % 3, so every row can be checked by hand.
std::string planetoid_script(const std::string& name, const std::string& test_index, int n_all,
                             const std::string& extra = "") {
  return "import pickle, numpy as np, scipy.sparse as sp, collections, os\n"
         "name = '" +
         name +
         "'\n"
         "n_all = " +
         std::to_string(n_all) +
         "\n"
         "test_index = [" +
         test_index +
         "]\n"
         "def feats(ids): return sp.csr_matrix(np.array([[v, 10 * v, 0] for v in ids], dtype=np.float32))\n"
         "def onehot(ids): return np.array([[1 if v % 3 == c else 0 for c in range(3)] for v in ids], "
         "dtype=np.int32)\n"
         "n = max(test_index) + 1\n"
         "graph = collections.defaultdict(list)\n"
         "for v in range(n): graph[v] = [(v + 1) % n, (v + n - 1) % n, v]\n"  // a ring, with self-loops
         "files = {'x': feats(range(2)), 'y': onehot(range(2)), 'allx': feats(range(n_all)),\n"
         "         'ally': onehot(range(n_all)), 'tx': feats(test_index), 'ty': onehot(test_index), 'graph': "
         "graph}\n" +
         extra +
         "os.makedirs('raw', exist_ok=True)\n"
         "for part, value in files.items():\n"
         "    with open('raw/ind.%s.%s' % (name, part), 'wb') as f: pickle.dump(value, f, protocol=2)\n"
         "with open('raw/ind.%s.test.index' % name, 'w') as f: f.write('\\n'.join(map(str, test_index)) + "
         "'\\n')\n";
}

TEST(PlanetoidReader, BuildsThePublicSplitAsPygDoes) {
  TempDir dir;
  // 510 nodes before the tests: 2 train, 500 valid, 8 more; tests 510..519 shuffled.
  testing::run_python_variants(
      {{"cora", planetoid_script("cora", "515, 510, 519, 511, 518, 512, 517, 513, 516, 514", 510)}},
      dir.path());
  const GraphStore s = read_planetoid({(dir.path() / "cora").string(), "Cora", {}, 2});
  EXPECT_EQ(s.num_nodes(), 520);
  EXPECT_EQ(s.num_features, 3);
  EXPECT_EQ(s.num_classes, 3);
  EXPECT_EQ(s.train_nodes().size(), 2u);
  EXPECT_EQ(s.valid_nodes().size(), 500u);
  EXPECT_EQ(s.valid_nodes().front(), 2);
  EXPECT_EQ(s.test_nodes().size(), 10u);
  EXPECT_EQ(s.test_nodes().front(), 510);
  // tx row k is node test_index[k]: node 517's features and label, by hand.
  EXPECT_EQ(s.features_of(517)[0], 517.0f);
  EXPECT_EQ(s.features_of(517)[1], 5170.0f);
  EXPECT_EQ(s.label(517), 517 % 3);
  EXPECT_EQ(s.label(4), 1);
  // The ring symmetrized, self-loops dropped: two neighbours each.
  EXPECT_EQ(s.num_edges(), 2 * 520);
  // The files directly in DIR work too.
  EXPECT_EQ(read_planetoid({(dir.path() / "cora" / "raw").string(), "cora", {}, 1}).num_nodes(), 520);
}

TEST(PlanetoidReader, CiteseerIsolatedTestNodesGetZeroRowsAndNoLabel) {
  TempDir dir;
  // test.index skips 513 and 516: two isolated nodes without a test row.
  testing::run_python_variants(
      {{"citeseer", planetoid_script("citeseer", "515, 510, 519, 511, 518, 512, 517, 514", 510)}},
      dir.path());
  const GraphStore s = read_planetoid({(dir.path() / "citeseer").string(), "citeseer", {}, 1});
  EXPECT_EQ(s.num_nodes(), 520) << "every index from the smallest to the largest test node";
  EXPECT_EQ(s.test_nodes().size(), 8u);
  EXPECT_EQ(s.features_of(513)[1], 0.0f);
  EXPECT_EQ(s.label(513), -1);
  EXPECT_EQ(s.features_of(517)[0], 517.0f);
  EXPECT_EQ(s.label(517), 517 % 3);
}

TEST(PlanetoidReader, BadLayoutsAreClearErrors) {
  TempDir dir;
  testing::run_python_variants(
      {{"short", planetoid_script("cora", "515, 510", 100)},
       {"mismatch", planetoid_script("cora", "515, 510", 510,
                                     "files['tx'] = feats([515]); files['ty'] = onehot([515])\n")},
       {"evil", planetoid_script("cora", "515, 510", 510,
                                 "class Evil:\n"
                                 "    def __reduce__(self): return (os.system, ('touch pwned',))\n"
                                 "files['graph'] = Evil()\n")}},
      dir.path());
  EXPECT_NE(error_of([&] {
              read_planetoid({(dir.path() / "short").string(), "cora", {}, 1});
            }).find("2 training + 500 validation nodes exceed the 100 rows of allx"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              read_planetoid({(dir.path() / "mismatch").string(), "cora", {}, 1});
            }).find("test.index lists 2 nodes, tx has 1 rows"),
            std::string::npos);
  const std::string evil = error_of([&] { read_planetoid({(dir.path() / "evil").string(), "cora", {}, 1}); });
  EXPECT_NE(evil.find("is not allowed"), std::string::npos) << evil;
  EXPECT_NE(evil.find("ind.cora.graph"), std::string::npos) << evil;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "evil" / "pwned")) << "nothing was executed";
  EXPECT_NE(error_of([&] {
              read_planetoid({dir.path().string(), "cora", {}, 1});
            }).find("no ind.cora.x in"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              read_planetoid({dir.path().string(), "nell", {}, 1});
            }).find("not one of cora"),
            std::string::npos);
}

}  // namespace
}  // namespace dgcn
