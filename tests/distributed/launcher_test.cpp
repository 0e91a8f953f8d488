// The launcher with /bin/sh as the rank program: exact, and fast.
#include "distributed/launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/timing.h"
#include "run_command.h"

namespace dgcn {
namespace {

using testing::read_text;
using testing::ScratchDir;

std::vector<std::string> sh(const std::string& script) {
  return {"/bin/sh", "-c", script};
}

TEST(Launcher, SetsTheTorchrunVariablesForEveryRank) {
  ScratchDir dir;
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "127.0.0.1";
  options.master_port = 23456;
  LaunchResult r = run_local_ranks(
      options,
      sh("echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $GROUP_RANK "
         "${OMP_NUM_THREADS:+omp} > " +
         dir.path() + "/$RANK"));
  EXPECT_EQ(r.exit_code, 0) << r.message;
  EXPECT_FALSE(r.failed_rank.has_value());
  EXPECT_EQ(read_text(dir.file("2")), "2 4 0 2 127.0.0.1 23456 1 omp\n");
  EXPECT_EQ(read_text(dir.file("3")), "3 4 1 2 127.0.0.1 23456 1 omp\n");
}

TEST(Launcher, SingleNodeDefaultsToLoopbackAndAFreePort) {
  ScratchDir dir;
  LaunchOptions options;
  options.nproc_per_node = 1;
  LaunchResult r = run_local_ranks(options, sh("echo $MASTER_ADDR $MASTER_PORT > " + dir.path() + "/env"));
  ASSERT_EQ(r.exit_code, 0) << r.message;
  std::string env = read_text(dir.file("env"));
  EXPECT_EQ(env.rfind("127.0.0.1 ", 0), 0u) << env;
  int port = std::stoi(env.substr(10));
  EXPECT_GT(port, 0);
  EXPECT_LE(port, 65535);
}

TEST(Launcher, FailedRankStopsTheOthersAndIsNamed) {
  LaunchOptions options;
  options.nproc_per_node = 3;
  auto start = Clock::now();
  // Rank 1 fails at once; ranks 0 and 2 would sleep for a minute.
  LaunchResult r = run_local_ranks(options, sh("if [ $RANK = 1 ]; then exit 7; fi; exec sleep 60"));
  EXPECT_EQ(r.exit_code, 7);
  ASSERT_TRUE(r.failed_rank.has_value());
  EXPECT_EQ(*r.failed_rank, 1);
  EXPECT_NE(r.message.find("rank 1 (pid "), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("exited with status 7"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("stopped the other 2 local rank(s)"), std::string::npos) << r.message;
  EXPECT_LT(seconds_since(start), options.timeout.count() / 1000.0)
      << "the launcher must not wait out the sleep";
}

TEST(Launcher, RankKilledBySignalIsReported) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  LaunchResult r = run_local_ranks(options, sh("if [ $RANK = 0 ]; then kill -9 $$; fi; exec sleep 60"));
  EXPECT_EQ(r.exit_code, 128 + 9);
  ASSERT_TRUE(r.failed_rank.has_value());
  EXPECT_EQ(*r.failed_rank, 0);
  EXPECT_NE(r.message.find("killed by signal 9"), std::string::npos) << r.message;
}

TEST(Launcher, RankIgnoringSigtermIsKilledAfterTheGrace) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.stop_grace = std::chrono::milliseconds(300);
  auto start = Clock::now();
  // Rank 1 ignores SIGTERM (and so does its sleep, which inherits SIG_IGN).
  LaunchResult r = run_local_ranks(
      options, sh("if [ $RANK = 0 ]; then sleep 0.2; exit 4; fi; trap '' TERM; sleep 60; exit 0"));
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.failed_rank, 0);
  EXPECT_LT(seconds_since(start), 30.0);
}

// Note [Restarts]: every local rank starts again with the start's number in
// TORCHELASTIC_RESTART_COUNT, on a fresh port, up to max_restarts times.
TEST(Launcher, FailedStartsAreRestartedUpToTheLimit) {
  ScratchDir dir;
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.max_restarts = 3;
  // Rank 1 fails on the first two starts; every start logs who ran with
  // what. Rank 1 fails only once rank 0 has logged this start, else the
  // launcher may stop rank 0 before its shell ran the echo.
  LaunchResult r = run_local_ranks(
      options, sh("echo $TORCHELASTIC_RESTART_COUNT $MASTER_PORT >> " + dir.path() +
                  "/starts.$RANK; if [ $RANK = 1 ] && [ $TORCHELASTIC_RESTART_COUNT -lt 2 ]; then "
                  "until grep -q \"^$TORCHELASTIC_RESTART_COUNT \" " +
                  dir.path() + "/starts.0 2>/dev/null; do sleep 0.01; done; exit 3; fi"));
  EXPECT_EQ(r.exit_code, 0) << r.message;
  EXPECT_EQ(r.restarts, 2);
  EXPECT_FALSE(r.failed_rank.has_value());
  for (const char* rank : {"0", "1"}) {
    std::istringstream starts(read_text(dir.file(std::string("starts.") + rank)));
    std::vector<int> counts, ports;
    for (int count, port; starts >> count >> port;) counts.push_back(count), ports.push_back(port);
    EXPECT_EQ(counts, (std::vector<int>{0, 1, 2})) << "rank " << rank;
    ASSERT_EQ(ports.size(), 3u);
    EXPECT_NE(ports[0], ports[1]) << "each start rendezvouses on a fresh port";
  }
}

TEST(Launcher, ARankFailingEveryStartEndsTheJobAfterTheLastRestart) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.max_restarts = 2;
  LaunchResult r = run_local_ranks(options, sh("if [ $RANK = 0 ]; then exit 6; fi; exec sleep 60"));
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_EQ(r.restarts, 2);
  EXPECT_EQ(r.failed_rank, 0);
  EXPECT_NE(r.message.find("(after 2 restart(s), --max-restarts=2)"), std::string::npos) << r.message;
}

TEST(Launcher, RestartsNeedOneNode) {
  LaunchOptions options;
  options.nnodes = 2;
  options.master_addr = "127.0.0.1";
  options.max_restarts = 1;
  try {
    run_local_ranks(options, sh("true"));
    FAIL() << "--max-restarts with two nodes was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use torchrun --max_restarts"), std::string::npos) << e.what();
  }
}

TEST(Launcher, ProgramThatCannotStartFails) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  LaunchResult r = run_local_ranks(options, {"/nonexistent/dgcn-no-such-program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_TRUE(r.failed_rank.has_value());
}

TEST(Launcher, SigtermToTheLauncherStopsTheRanks) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGTERM);
  });
  LaunchResult r = run_local_ranks(options, sh("exec sleep 60"));
  interrupter.join();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_FALSE(r.failed_rank.has_value());
  EXPECT_NE(r.message.find("interrupted by signal 15"), std::string::npos) << r.message;
}

TEST(Launcher, RejectsInvalidOptions) {
  LaunchOptions options;
  options.nproc_per_node = 0;
  EXPECT_THROW(run_local_ranks(options, sh("true")), Error);
  options.nproc_per_node = 1;
  options.nnodes = 2;
  EXPECT_THROW(run_local_ranks(options, sh("true")), Error);  // no --master-addr
  options.master_addr = "10.1.1.1";
  options.node_rank = 2;
  EXPECT_THROW(run_local_ranks(options, sh("true")), Error);
  try {
    options.node_rank = 0;
    options.nnodes = 2;
    options.master_addr.clear();
    run_local_ranks(options, sh("true"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--master-addr"), std::string::npos) << e.what();
  }
}

TEST(Launcher, FreePortIsBindable) {
  for (int i = 0; i < 3; ++i) {
    int port = find_free_port();
    EXPECT_GT(port, 0);
    EXPECT_LE(port, 65535);
  }
}

}  // namespace
}  // namespace dgcn
