// The owner round trip (Note [Asking the owners]), with ranks as threads
// (tests/in_process_collectives.h).
#include "partition/owner_exchange.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "fixtures.h"
#include "in_process_collectives.h"
#include "partition/partition.h"
#include "three_parts.h"

namespace dgcn {
namespace {

using testing::InProcessGroup;
using testing::run_ranks;
using testing::ThreeParts;

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

}  // namespace
}  // namespace dgcn
