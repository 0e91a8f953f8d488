// The owner round trip (Note [Asking the owners]) and the collectives'
// all-gather, with ranks as threads (tests/in_process_collectives.h).
#include "partition/owner_exchange.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "fixtures.h"
#include "in_process_collectives.h"
#include "partition/partition.h"

namespace dgcn {
namespace {

using testing::InProcessGroup;
using testing::run_ranks;

// The 30-node cycle cut into 3 parts by v % 3, and each rank's map.
struct ThreeParts {
  GraphStore whole = testing::make_store(testing::cycle_edges(30));
  std::vector<GraphStore> parts;
  std::vector<std::unique_ptr<PartMap>> maps;
  ThreeParts() {
    std::vector<int32_t> owner(30);
    for (int v = 0; v < 30; ++v) owner[static_cast<size_t>(v)] = v % 3;
    const Buffer owners = Buffer::from_vector(std::move(owner));
    for (int r = 0; r < 3; ++r) parts.push_back(extract_part(whole, owners, r, 3, "{}", 1));
    for (int r = 0; r < 3; ++r) maps.push_back(std::make_unique<PartMap>(parts[static_cast<size_t>(r)].part));
  }
};

TEST(PartMap, OwnerAndRowAreThePartAndTheRankInIdOrder) {
  ThreeParts p;
  const PartMap& map = *p.maps[1];
  EXPECT_EQ(map.parts(), 3);
  EXPECT_EQ(map.num_nodes(), 30);
  EXPECT_EQ(map.owner(14), 2);
  EXPECT_EQ(map.row(14), 4);  // part 2 holds 2, 5, 8, 11, 14: row 4
  EXPECT_TRUE(map.owns(2, 14));
  EXPECT_FALSE(map.owns(1, 14));
  EXPECT_FALSE(map.owns(0, 30)) << "out of range";
  EXPECT_FALSE(map.owns(0, -1));
}

TEST(OwnerGroups, GroupsByOwnerKeepingTheOrderWithinAnOwner) {
  ThreeParts p;
  OwnerGroups groups;
  const std::vector<int64_t> nodes{7, 3, 4, 0, 9, 1, 5};
  groups.group(nodes, *p.maps[0]);
  EXPECT_EQ(std::vector<int64_t>(groups.of(0).begin(), groups.of(0).end()), (std::vector<int64_t>{3, 0, 9}));
  EXPECT_EQ(std::vector<int64_t>(groups.of(1).begin(), groups.of(1).end()), (std::vector<int64_t>{7, 4, 1}));
  EXPECT_EQ(std::vector<int64_t>(groups.of(2).begin(), groups.of(2).end()), (std::vector<int64_t>{5}));
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(groups.owner_of(i), nodes[i] % 3) << i;
}

// Every rank asks for the nodes v = rank, rank + 4, ... and each owner
// answers 1000 * owner + its row; the answers come back per owner in the
// order asked, whether the rank asks itself or not.
TEST(OwnerRoundTrip, AnswersComeBackFromEachOwnerInTheOrderAsked) {
  ThreeParts p;
  for (bool ask_self : {true, false}) {
    InProcessGroup group(3);
    std::vector<RoundTripCost> costs(3);
    run_ranks(3, [&](int rank) {
      const PartMap& map = *p.maps[static_cast<size_t>(rank)];
      std::vector<int64_t> nodes;
      for (int64_t v = 29 - rank; v >= 0; v -= 4) nodes.push_back(v);
      OwnerGroups groups;
      groups.group(nodes, map);
      OwnerRoundTrip trip(group.at(rank), map, "test");
      const int64_t header[] = {rank, 77};
      costs[static_cast<size_t>(rank)] = trip.run(header, groups, ask_self,
                                                  [&](int peer, std::span<const int64_t> peer_header,
                                                      std::span<const int64_t> ids, Messages& answers) {
                                                    EXPECT_EQ(peer_header[0], peer);
                                                    EXPECT_EQ(peer_header[1], 77);
                                                    for (int64_t v : ids) {
                                                      EXPECT_EQ(map.owner(v), rank)
                                                          << "asked for a node this rank does not own";
                                                      answers.append_value<int64_t>(1000 * rank + map.row(v));
                                                    }
                                                  });
      for (int q = 0; q < 3; ++q) {
        const auto asked = groups.of(q);
        const auto answer = MessageReader(trip.answer(q), "test").take<int64_t>(trip.answer(q).size() / 8);
        if (q == rank && !ask_self) {
          EXPECT_TRUE(answer.empty());
          continue;
        }
        ASSERT_EQ(answer.size(), asked.size()) << "rank " << rank << " from " << q;
        for (size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(answer[i], 1000 * q + map.row(asked[i]));
      }
    });
    for (const RoundTripCost& c : costs) {
      EXPECT_GT(c.request_bytes, 0);
      EXPECT_GT(c.answer_bytes, 0);
      EXPECT_GE(c.seconds, 0);
    }
    EXPECT_EQ(group.exchanges(), 2) << "one all-to-all each way";
  }
}

TEST(Collectives, AllGatherGivesEveryRankEveryRanksValuesInRankOrder) {
  InProcessGroup group(3);
  run_ranks(3, [&](int rank) {
    const std::vector<double> mine(static_cast<size_t>(rank), rank + 0.5);  // rank 0 sends none
    const auto all = all_gather(group.at(rank), mine);
    ASSERT_EQ(all.size(), 3u);
    for (int q = 0; q < 3; ++q) EXPECT_EQ(all[static_cast<size_t>(q)], std::vector<double>(q, q + 0.5));
    EXPECT_EQ(group.at(rank).sum({1.0, static_cast<double>(rank)}), (std::vector<double>{3.0, 3.0}));
    EXPECT_EQ(all_gather_text(group.at(rank), rank == 1 ? "bad part" : ""),
              (std::vector<std::string>{"", "bad part", ""}));
  });
}

}  // namespace
}  // namespace dgcn
