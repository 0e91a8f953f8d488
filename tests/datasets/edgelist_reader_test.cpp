#include "datasets/edgelist_reader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

const char* kSnap =
    "# Directed graph: example.txt\n"
    "# FromNodeId\tToNodeId\n"
    "0\t1\n"
    "1 2\n"
    "\n"
    "  2   0  \n"
    "2\t2\n"
    "4 3\n";

GraphStore read(const std::string& file, EdgeListOptions o = {}) {
  o.file = file;
  o.num_threads = 2;
  return read_edgelist(o);
}

TEST(EdgeListReader, ReadsSnapStylePlainAndGzip) {
  TempDir dir;
  testing::write_text(dir / "g.txt", kSnap);
  testing::write_gz(dir / "g.txt.gz", kSnap);
  for (const char* name : {"g.txt", "g.txt.gz"}) {
    GraphStore s = read(dir / name);
    EXPECT_EQ(s.num_nodes(), 5);
    EXPECT_EQ(s.num_edges(), 8);  // triangle 0-1-2 and 3-4, symmetrized, loop dropped
    EXPECT_EQ(s.task, Task::kNone);
    EXPECT_EQ(s.num_features, 0);
    EXPECT_EQ(s.degrees()[2], 2);
    EXPECT_EQ(s.degrees()[4], 1);
  }
  EdgeListOptions o;
  o.num_nodes = 7;
  o.edges.symmetrize = false;
  GraphStore wide = read(dir / "g.txt", o);
  EXPECT_EQ(wide.num_nodes(), 7);
  EXPECT_EQ(wide.num_edges(), 4);
  // Directed, node v aggregates along its incoming edges (PyG's
  // source_to_target): the edge 4 -> 3 puts 4 in row 3, row 4 stays empty.
  EXPECT_EQ(wide.graph.degree(3), 1);
  EXPECT_EQ(wide.graph.degree(4), 0);
  EXPECT_EQ(wide.graph.indices<int32_t>()[wide.graph.indptr()[3]], 4);
}

TEST(EdgeListReader, SparseIdsAreRenumberedAndKeptAsNodeIds) {
  // One huge id must not allocate for every id below it (a fuzz finding):
  // three nodes, numbered in increasing order of their file ids.
  TempDir dir;
  testing::write_text(dir / "g.txt", "4000000000000 5\n5 7\n");
  GraphStore s = read(dir / "g.txt");
  ASSERT_EQ(s.num_nodes(), 3);
  EXPECT_EQ(s.num_edges(), 4);
  EXPECT_EQ(s.source_id(0), 5);
  EXPECT_EQ(s.source_id(1), 7);
  EXPECT_EQ(s.source_id(2), 4000000000000);
  EXPECT_EQ(s.graph.degree(0), 2);  // 5 meets 7 and the huge id
  EXPECT_EQ(s.graph.degree(1), 1);
  // Ids without large gaps stay as they are (no node ids section).
  testing::write_text(dir / "dense.txt", kSnap);
  EXPECT_TRUE(read(dir / "dense.txt").source_ids.empty());
}

TEST(EdgeListReader, AStoreIsNotAnEdgeListAndSaysWhatItIs) {
  TempDir dir;
  std::ofstream(dir / "g.gcn", std::ios::binary) << std::string("\x89GCN\r\n\x1a\n", 8) << "rest";
  const std::string e = testing::error_of([&] { read(dir / "g.gcn"); });
  EXPECT_NE(e.find("not an edge list: it is a .gcn graph store"), std::string::npos) << e;
  EXPECT_NE(e.find("dgcn-prep info"), std::string::npos) << e;
}

TEST(EdgeListReader, ManyChunksGiveTheSameGraph) {
  TempDir dir;
  std::string text = "# big\n";
  for (int i = 0; i < 20000; ++i)
    text += std::to_string(i % 997) + " " + std::to_string((i * 31 + 7) % 1009) + "\n";
  testing::write_gz(dir / "big.gz", text);
  EdgeListOptions small;
  small.chunk_bytes = 64;
  GraphStore a = read(dir / "big.gz");
  GraphStore b = read(dir / "big.gz", small);
  ASSERT_EQ(a.num_edges(), b.num_edges());
  auto ia = a.graph.indices<int32_t>(), ib = b.graph.indices<int32_t>();
  EXPECT_TRUE(std::equal(ia.begin(), ia.end(), ib.begin()));
  EXPECT_EQ(a.num_nodes(), 1009);
}

TEST(EdgeListReader, BadLinesAreNamed) {
  TempDir dir;
  testing::write_text(dir / "a.txt", "0 1\n1 x2\n");
  std::string err = error_of([&] { read(dir / "a.txt"); });
  EXPECT_NE(err.find("a.txt: line 2: destination 'x2' is not a node id"), std::string::npos) << err;
  testing::write_text(dir / "b.txt", "0 1\n1 2 3\n");
  err = error_of([&] { read(dir / "b.txt"); });
  EXPECT_NE(err.find("b.txt: line 2: '1 2 3' has 3 fields, expected 'src dst'"), std::string::npos) << err;
  testing::write_text(dir / "c.txt", "0 1\n-1 2\n");
  err = error_of([&] { read(dir / "c.txt"); });
  EXPECT_NE(err.find("c.txt: line 2: source '-1' is not a node id"), std::string::npos) << err;
  EdgeListOptions o;
  o.num_nodes = 3;
  testing::write_text(dir / "d.txt", "0 1\n1 2\n2 3\n");
  err = error_of([&] { read(dir / "d.txt", o); });
  EXPECT_NE(err.find("d.txt: line 3: node id 3 is not below num_nodes 3"), std::string::npos) << err;
}

}  // namespace
}  // namespace dgcn
