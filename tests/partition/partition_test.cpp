#include "partition/partition.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/error.h"
#include "fixtures.h"
#include "graph/components.h"
#include "graph/reorder.h"
#include "graph/store_header.h"
#include "graph/store_test_util.h"
#include "graph/symmetry.h"
#include "in_process_collectives.h"
#include "partition/part_loading.h"
#include "partition/partition_files.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

using testing::error_of;

using testing::contains;

std::vector<GraphStore> parts_of(const GraphStore& whole, int count, PartitionMethod method) {
  const Buffer owner =
      Buffer::from_vector(assign_parts(whole, {.parts = count, .method = method, .seed = 1}));
  std::vector<GraphStore> parts;
  for (int p = 0; p < count; ++p) parts.push_back(extract_part(whole, owner, p, count, "{}", 2));
  return parts;
}

// The parts together hold the whole graph: each node in exactly one part,
// with its row, features, label, degree and split membership.
TEST(Partition, PartsTogetherHoldTheWholeGraph) {
  const GraphStore whole = testing::community_store();
  for (PartitionMethod method : {PartitionMethod::kMetis, PartitionMethod::kRandom}) {
    const std::vector<GraphStore> parts = parts_of(whole, 3, method);
    std::vector<int> seen(static_cast<size_t>(whole.num_nodes()), 0);
    std::set<int64_t> train, valid, test;
    for (const GraphStore& part : parts) {
      part.validate("part", 2);
      ASSERT_EQ(part.graph.num_cols(), whole.num_nodes());
      const auto ids = part.part.ids();
      for (int64_t i = 0; i < part.num_nodes(); ++i) {
        const int64_t v = ids[static_cast<size_t>(i)];
        ++seen[static_cast<size_t>(v)];
        EXPECT_EQ(part.part.owners()[static_cast<size_t>(v)], part.part.index);
        EXPECT_EQ(part.part.row_of(v), i);
        EXPECT_EQ(part.graph.degree(i), whole.graph.degree(v));
        const auto a = part.graph.indices<int32_t>().subspan(static_cast<size_t>(part.graph.indptr()[i]),
                                                             static_cast<size_t>(part.graph.degree(i)));
        const auto b = whole.graph.indices<int32_t>().subspan(static_cast<size_t>(whole.graph.indptr()[v]),
                                                              static_cast<size_t>(whole.graph.degree(v)));
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "row of node " << v;
        EXPECT_EQ(0, std::memcmp(part.features_of(i).data(), whole.features_of(v).data(),
                                 whole.features_of(v).size_bytes()));
        EXPECT_EQ(part.label(i), whole.label(v));
      }
      train.insert(part.train_nodes().begin(), part.train_nodes().end());
      valid.insert(part.valid_nodes().begin(), part.valid_nodes().end());
      test.insert(part.test_nodes().begin(), part.test_nodes().end());
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
    EXPECT_EQ(train, std::set<int64_t>(whole.train_nodes().begin(), whole.train_nodes().end()));
    EXPECT_EQ(valid, std::set<int64_t>(whole.valid_nodes().begin(), whole.valid_nodes().end()));
    EXPECT_EQ(test, std::set<int64_t>(whole.test_nodes().begin(), whole.test_nodes().end()));
  }
}

TEST(Partition, MetisCutsFewerEdgesThanARandomSplitAndBalancesEachConstraint) {
  const GraphStore whole = testing::community_store();  // 4 dense communities
  const auto metis = assign_parts(whole, {.parts = 4, .method = PartitionMethod::kMetis});
  const auto random = assign_parts(whole, {.parts = 4, .method = PartitionMethod::kRandom});
  const PartitionQuality m = partition_quality(whole, metis, 4, 2);
  const PartitionQuality r = partition_quality(whole, random, 4, 2);
  EXPECT_LT(m.cut_fraction, 0.5 * r.cut_fraction) << m.cut_fraction << " vs " << r.cut_fraction;
  EXPECT_LE(m.node_balance, 1.1);
  EXPECT_LE(m.train_balance, 1.1);
  EXPECT_LE(m.entry_balance, 1.15);
  EXPECT_EQ(r.node_balance, 1.0);  // 400 nodes, 100 per part
  // The cut counted by hand.
  int64_t cut = 0;
  const auto ptr = whole.graph.indptr();
  const auto idx = whole.graph.indices<int32_t>();
  for (int64_t v = 0; v < whole.num_nodes(); ++v)
    for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e)
      cut += metis[static_cast<size_t>(v)] != metis[static_cast<size_t>(idx[e])];
  EXPECT_EQ(m.cut_entries, cut);
  // The same seed, the same split.
  EXPECT_EQ(random, assign_parts(whole, {.parts = 4, .method = PartitionMethod::kRandom}));
  EXPECT_NE(random, assign_parts(whole, {.parts = 4, .method = PartitionMethod::kRandom, .seed = 9}));
}

TEST(Partition, BadRequestsAreErrors) {
  const GraphStore whole = testing::make_store(testing::cycle_edges(5));
  EXPECT_TRUE(
      contains(error_of([&] { assign_parts(whole, {.parts = 6}); }), "6 parts for a graph of 5 nodes"));
  EXPECT_TRUE(contains(error_of([&] { assign_parts(whole, {.parts = 0}); }), "0 parts"));
  const GraphStore part = parts_of(whole, 2, PartitionMethod::kRandom)[0];
  EXPECT_TRUE(contains(error_of([&] { assign_parts(part, {.parts = 2}); }), "already part 0 of 2"));
  EXPECT_THROW(parse_partition_method("spectral"), Error);
}

// The rows of one part name nodes beyond them: algorithms that index per-node
// arrays by neighbour id refuse a part instead of reading past their arrays.
TEST(Partition, WholeGraphAlgorithmsRefuseAPart) {
  const GraphStore part =
      parts_of(testing::make_store(testing::cycle_edges(30)), 2, PartitionMethod::kRandom)[0];
  EXPECT_TRUE(contains(error_of([&] { connected_components(part.graph, 1); }), "needs a whole graph"));
  EXPECT_TRUE(contains(error_of([&] { rcm_ordering(part.graph, 1); }),
                       "rcm ordering: needs a whole graph, but this "
                       "holds 15 rows of a graph of 30 nodes"));
  EXPECT_TRUE(contains(error_of([&] { is_symmetric(part.graph, 1); }), "needs a whole graph"));
}

// A part survives the .gcn file (raw and compressed, private and shared-cache loads).
TEST(PartitionFiles, APartRoundTripsThroughTheStoreFormat) {
  testing::ScratchDir dir;
  const GraphStore whole = testing::with_multi_labels(testing::make_store(testing::cycle_edges(200), 3, 4));
  const GraphStore part = parts_of(whole, 3, PartitionMethod::kRandom)[2];
  for (bool raw : {false, true}) {
    const std::string path = dir.file(raw ? "raw.gcn" : "zstd.gcn");
    SaveOptions save;
    save.all_raw = raw;
    save.zstd_min_bytes = 0;
    save_store(part, path, save);
    const StoreHeader h = read_store_header(path);
    EXPECT_EQ(h.part_index, 2);
    EXPECT_EQ(h.part_count, 3);
    EXPECT_EQ(h.num_global_nodes, 200);
    for (LoadMode mode : {LoadMode::kPrivate, LoadMode::kSharedCache}) {
      LoadOptions o;
      o.mode = mode;
      o.cache_dir = dir.path();
      const GraphStore back = load_store(path, o);
      EXPECT_EQ(content_digest(back, 2), content_digest(part, 2));
      EXPECT_EQ(back.part.num_global_nodes, 200);
      EXPECT_EQ(back.graph.num_cols(), 200);
    }
  }
  // Parts hash their ids: two parts never share a digest with the whole graph.
  EXPECT_NE(content_digest(part, 2), content_digest(whole, 2));
}

TEST(PartitionFiles, LyingPartHeadersAreRejected) {
  testing::ScratchDir dir;
  const GraphStore part =
      parts_of(testing::make_store(testing::cycle_edges(50)), 2, PartitionMethod::kRandom)[1];
  const std::string path = dir.file("p.gcn");
  save_store(part, path);
  const StoreHeader good = read_store_header(path);
  auto load_error = [&](const StoreHeader& h) {
    std::vector<char> bytes = testing::read_bytes(path);
    const std::vector<std::byte> header = detail::encode_header(h);
    std::memcpy(bytes.data(), header.data(), header.size());
    const std::string lying = dir.file("lying.gcn");
    testing::write_bytes(lying, bytes);
    return error_of([&] { load_store(lying); });
  };
  StoreHeader h = good;
  h.part_index = 2;
  EXPECT_TRUE(contains(load_error(h), "part 2 of 2 parts")) << load_error(h);
  h = good;
  h.num_global_nodes = 10;
  EXPECT_TRUE(contains(load_error(h), "a part of 25 nodes of a graph of 10 nodes")) << load_error(h);
  h = good;
  h.num_global_nodes = 60;  // node_parts holds 50
  EXPECT_TRUE(contains(load_error(h), "section 'node_parts': shape [50, 1], expected [60, 1]"))
      << load_error(h);
  h = good;
  h.part_count = 0;  // a whole graph with part fields
  EXPECT_TRUE(contains(load_error(h), "set in a whole graph")) << load_error(h);
}

TEST(PartitionFiles, ValidateNamesWhatIsWrongWithAPart) {
  const GraphStore good =
      parts_of(testing::make_store(testing::cycle_edges(40)), 2, PartitionMethod::kRandom)[0];
  auto error_with = [&](auto&& change) {
    GraphStore s = good;
    change(s);
    return error_of([&] { s.validate("p", 1); });
  };
  // A split node the part does not own.
  EXPECT_TRUE(contains(error_with([](GraphStore& s) {
                         const auto owners = s.part.owners();
                         int64_t other = 0;
                         while (owners[static_cast<size_t>(other)] == 0) ++other;
                         s.train = Buffer::from_vector(std::vector<int64_t>{other});
                       }),
                       "belongs to part 1, not to this part (0 of 2)"));
  // The owner map giving a row to another part.
  EXPECT_TRUE(contains(error_with([](GraphStore& s) {
                         std::vector<int32_t> owners(s.part.owners().begin(), s.part.owners().end());
                         owners[static_cast<size_t>(s.part.ids()[0])] = 1;
                         s.part.node_parts = Buffer::from_vector(std::move(owners));
                       }),
                       "which node_parts gives to part 1"));
  // Ids out of order.
  EXPECT_TRUE(contains(error_with([](GraphStore& s) {
                         std::vector<int64_t> ids(s.part.ids().begin(), s.part.ids().end());
                         std::swap(ids[0], ids[1]);
                         s.part.global_ids = Buffer::from_vector(std::move(ids));
                       }),
                       "not above the id before it"));
  // An owner outside the parts.
  EXPECT_TRUE(contains(error_with([](GraphStore& s) {
                         std::vector<int32_t> owners(s.part.owners().begin(), s.part.owners().end());
                         owners.back() = 7;
                         s.part.node_parts = Buffer::from_vector(std::move(owners));
                       }),
                       "is not a part in [0, 2)"));
}

}  // namespace
}  // namespace dgcn
