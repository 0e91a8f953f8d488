// Collectives over Gloo on localhost, N ranks as processes: values by hand.
#include <gtest/gtest.h>

#include "worker.h"

namespace dgcn {
namespace {

using testing::run_worker;
using testing::ScratchDir;

TEST(ProcessGroup, CollectivesGiveHandWorkedValues) {
  for (int n : {1, 2, 4}) {
    ScratchDir out;
    auto run = run_worker(n, {"collectives"}, out);
    ASSERT_EQ(run.launch.exit_code, 0) << "n=" << n << ": " << run.launch.message;
    const double sum_of_rank_plus_one = n * (n + 1) / 2.0;
    for (int r = 0; r < n; ++r) {
      const auto& j = run.ranks[r];
      ASSERT_FALSE(j.is_null()) << "rank " << r << " wrote nothing";
      EXPECT_EQ(j["rank"], r);
      EXPECT_EQ(j["world_size"], n);
      // All-reduce of rank+1 over n ranks = n(n+1)/2, for three sizes in flight at once.
      for (const auto& minmax : j["allreduce"]) {
        EXPECT_EQ(minmax[0].get<double>(), sum_of_rank_plus_one) << "n=" << n << " rank " << r;
        EXPECT_EQ(minmax[1].get<double>(), sum_of_rank_plus_one) << "n=" << n << " rank " << r;
      }
      // Broadcast from the last rank, which holds 10 * (n - 1).
      EXPECT_EQ(j["broadcast"][0].get<double>(), 10.0 * (n - 1));
      EXPECT_EQ(j["broadcast"][1].get<double>(), 10.0 * (n - 1));
      EXPECT_EQ(j["sum_of_ranks"].get<double>(), n * (n - 1) / 2.0);
      EXPECT_EQ(j["count"].get<double>(), n);
      // All-to-all, on the group and on a second one: from rank q, q + r values of 100 q + r.
      ASSERT_EQ(j["alltoall"].size(), 2u);
      for (const auto& from : j["alltoall"]) {
        ASSERT_EQ(from.size(), static_cast<size_t>(n));
        for (int q = 0; q < n; ++q) {
          EXPECT_EQ(from[q].get<std::vector<int64_t>>(), std::vector<int64_t>(q + r, 100 * q + r))
              << "n=" << n << " rank " << r << " from " << q;
        }
      }
    }
  }
}

// Kill-a-rank: the launcher names the rank that failed and its status, and
// stops the others, well within the collective timeout.
TEST(ProcessGroup, RankThatExitsIsNamedAndPeersAreStopped) {
  ScratchDir out;
  auto run = run_worker(3, {"fail", "--victim", "1", "--how", "exit"}, out);
  EXPECT_EQ(run.launch.exit_code, 3) << run.launch.message;
  EXPECT_EQ(run.launch.failed_rank, 1) << run.launch.message;
  EXPECT_NE(run.launch.message.find("rank 1 (pid "), std::string::npos) << run.launch.message;
  EXPECT_NE(run.launch.message.find("exited with status 3"), std::string::npos) << run.launch.message;
  EXPECT_LT(run.seconds, 20.0) << "must not wait for the 20 s collective timeout";
}

TEST(ProcessGroup, RankKilledBySignalIsNamed) {
  ScratchDir out;
  auto run = run_worker(2, {"fail", "--victim", "0", "--how", "signal"}, out);
  EXPECT_EQ(run.launch.exit_code, 128 + 9) << run.launch.message;
  EXPECT_EQ(run.launch.failed_rank, 0) << run.launch.message;
  EXPECT_NE(run.launch.message.find("killed by signal 9"), std::string::npos) << run.launch.message;
  EXPECT_LT(run.seconds, 20.0);
}

TEST(ProcessGroup, RankAbsentFromACollectiveTimesOutItsPeers) {
  // Rank 1 never joins the second all-reduce (and ignores SIGTERM): rank 0's
  // collective fails after the 3 s timeout, the launcher names rank 0 and
  // kills rank 1.
  ScratchDir out;
  auto options = testing::with_timeout(3);
  options.stop_grace = std::chrono::milliseconds(500);
  auto run = run_worker(2, {"fail", "--victim", "1", "--how", "absent"}, out, options);
  EXPECT_EQ(run.launch.exit_code, 1) << run.launch.message;
  EXPECT_EQ(run.launch.failed_rank, 0) << run.launch.message;
  ASSERT_FALSE(run.ranks[0].is_null());
  std::string error = run.ranks[0]["error"];
  EXPECT_NE(error.find("allreduce of 16 x Float (gloo, rank 0 of 2) failed"), std::string::npos) << error;
  EXPECT_LT(run.seconds, 3.0 + 0.5 + testing::kStartSlackSeconds);
  std::cout << "[ timeout ] rank 0 saw: " << error << "\n[ timeout ] launcher: " << run.launch.message
            << " after " << run.seconds << " s\n";
}

// Note [Who is stuck]: of 3 ranks, rank 1 stays alive in its own work; the
// collective that ranks 0 and 2 wait in times out, and their error names
// rank 1 (and only it) as the one that never reached it.
TEST(ProcessGroup, ACollectiveThatTimesOutNamesTheRankThatNeverReachedIt) {
  ScratchDir out;
  auto options = testing::with_timeout(3);
  options.stop_grace = std::chrono::milliseconds(500);
  auto run = run_worker(3, {"fail", "--victim", "1", "--how", "stall"}, out, options);
  EXPECT_NE(run.launch.exit_code, 0) << run.launch.message;
  int errors = 0;
  for (int r : {0, 2}) {
    if (run.ranks[r].is_null()) continue;  // stopped by the launcher once the other peer failed first
    ++errors;
    const std::string error = run.ranks[r]["error"];
    EXPECT_NE(error.find("; rank 1 did not reach collective #2 (stuck in its own work, or gone)"),
              std::string::npos)
        << "rank " << r << ": " << error;
    std::cout << "[ stuck ] rank " << r << " saw: " << error << "\n";
  }
  EXPECT_GE(errors, 1) << "no peer wrote its error: " << run.launch.message;
  EXPECT_LT(run.seconds, 3.0 + 2.0 + testing::kStartSlackSeconds);
}

TEST(ProcessGroup, HangingRankIsKilledWhenAPeerFails) {
  ScratchDir out;
  auto options = testing::with_timeout(20);
  options.stop_grace = std::chrono::milliseconds(500);
  auto run = run_worker(2, {"fail", "--victim", "1", "--how", "hang"}, out, options);
  EXPECT_EQ(run.launch.exit_code, 5) << run.launch.message;
  EXPECT_EQ(run.launch.failed_rank, 0) << run.launch.message;
  EXPECT_LT(run.seconds, 20.0);
}

}  // namespace
}  // namespace dgcn
