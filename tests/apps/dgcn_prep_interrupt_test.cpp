// dgcn-prep interrupted by SIGINT or SIGTERM at chosen moments of every
// writing subcommand: the output path is left exactly as it was (no part
// files, no "*.tmp-*" files, no half folder), one line says so, the status is
// that of the signal (130 / 143 in a shell), and a rerun succeeds. The
// moments are the pause points of base/atomic_file.h (DGCN_TEST_PAUSE_AT), so
// each case stops where it says, not where a timer happened to land.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "datasets/dataset_files.h"
#include "fixtures.h"
#include "graph/store_format.h"
#include "process_probe.h"
#include "run_command.h"

namespace dgcn {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::string prep_bin() {
  return testing::binary("dgcn-prep");
}

// Every path under `root` with its content ("<dir>" for folders): the state
// an interrupted run must leave unchanged.
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    out[rel] = e.is_directory() ? "<dir>" : testing::read_text(e.path().string());
  }
  return out;
}

struct Interrupted {
  bool paused = false;  // the run reached the pause point
  int exit_code = -1;   // 128 + signal when the signal ended it
  std::string err;
};

// Runs `dgcn-prep ARGS` until it pauses at `point`, then sends `sig`.
Interrupted interrupt_at(const ScratchDir& logs, const std::string& args, const std::string& point, int sig) {
  static int counter = 0;
  const std::string err = logs.file("run" + std::to_string(counter++) + ".err");
  const pid_t pid = testing::spawn_shell("env DGCN_TEST_PAUSE_AT=" + point + " " + prep_bin() + " " + args +
                                         " >/dev/null 2>" + err);
  Interrupted r;
  int status = 0;
  bool ended = false;  // on its own, before the pause point (an error)
  r.paused = testing::wait_until(
                 [&] {
                   ended = waitpid(pid, &status, WNOHANG) == pid;
                   return ended || testing::read_text(err).find("dgcn-test-paused-at") != std::string::npos;
                 },
                 std::chrono::seconds(60)) &&
             !ended;
  if (ended) {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } else {
    kill(pid, r.paused ? sig : SIGKILL);
    r.exit_code = testing::wait_exit_code(pid);
  }
  r.err = testing::read_text(err);
  return r;
}

int count_of(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

struct Case {
  std::string name;
  std::string args;                 // without --out
  std::vector<std::string> points;  // where to interrupt it
};

class PrepInterrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    // Inputs live apart from the output folder, whose whole state is compared.
    store_ = inputs_.file("c.gcn");
    save_store(testing::community_store(), store_, {});
    testing::write_gz(inputs_.file("g.txt.gz"), "0 1\n1 2\n2 0\n3 4\n");
    const std::string root = inputs_.file("ogb");
    testing::write_tiny_ogb(root);
  }

  // Interrupts `c` at each of its points under both signals, with `out`
  // absent and (when `existing` is not empty) holding `existing`'s state, then
  // reruns it uninterrupted.
  void check(const Case& c, const std::string& out_name,
             const std::function<void(const std::string&)>& existing) {
    const std::vector<std::function<void(const std::string&)>> before = {[](const std::string&) {}, existing};
    for (const auto& prepare : before) {
      if (!prepare) continue;
      for (const std::string& point : c.points) {
        for (const int sig : {SIGINT, SIGTERM}) {
          SCOPED_TRACE(c.name + " at " + point + " by " + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
          ScratchDir out_dir;
          const std::string out = out_dir.file(out_name);
          prepare(out);
          const auto was = snapshot(out_dir.path());
          const Interrupted r = interrupt_at(logs_, c.args + " --out " + out, point, sig);
          ASSERT_TRUE(r.paused) << "never reached " << point << ": " << r.err;
          EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
          EXPECT_EQ(snapshot(out_dir.path()), was) << "the output path changed";
          EXPECT_EQ(count_of(r.err, "interrupted"), 1) << r.err;
          EXPECT_NE(r.err.find("dgcn-prep: interrupted; nothing was written (" + out + " is as it was)"),
                    std::string::npos)
              << r.err;
          // The rerun succeeds and leaves only its output.
          const testing::CommandResult again =
              testing::run_command(prep_bin() + " " + c.args + " --out " + out, logs_);
          EXPECT_EQ(again.exit_code, 0) << again.err;
          EXPECT_EQ(ScratchDir::entries_of(out_dir.path()), std::vector<std::string>{out_name});
        }
      }
    }
  }

  ScratchDir inputs_, logs_;
  std::string store_;
};

const std::vector<std::string> kFilePoints = {"atomic-file-created", "atomic-file-commit"};

TEST_F(PrepInterrupt, ConvertLeavesAMissingOrAnOldOutputAsItWas) {
  check({"convert", "convert " + store_ + " --threads 2", kFilePoints}, "out.gcn",
        [](const std::string& out) { testing::write_text(out, "an old file the user had"); });
}

TEST_F(PrepInterrupt, SyntheticEdgelistOgbLeaveNothing) {
  check({"synthetic", "synthetic --preset tiny --seed 3 --num-nodes 2000 --mean-degree 12 --threads 2",
         kFilePoints},
        "s.gcn", nullptr);
  check({"edgelist", "edgelist --file " + inputs_.file("g.txt.gz"), kFilePoints}, "e.gcn", nullptr);
  check({"ogb", "ogb --root " + inputs_.file("ogb"), kFilePoints}, "o.gcn", nullptr);
}

TEST_F(PrepInterrupt, NpzLeavesNothing) {
  const std::string cora = testing::shared_dataset("cora.npz");
  if (cora.empty()) GTEST_SKIP() << "../shared/datasets/cora.npz is absent";
  check({"npz", "npz --file " + cora + " --seed 3 --threads 2", kFilePoints}, "cora.gcn", nullptr);
}

// Before the folder exists, inside the first part, between parts, inside
// the last, with every file in place before the rename; into an absent and
// an empty --out folder.
TEST_F(PrepInterrupt, PartitionLeavesNoPartsNoTemporaryAndNoHalfFolder) {
  check({"partition",
         "partition " + store_ + " --parts 3 --threads 2",
         {"atomic-folder-created", "atomic-file-created", "atomic-file-commit", "atomic-file-committed:1",
          "atomic-file-created:3", "atomic-file-commit:4", "atomic-folder-commit"}},
        "parts", [](const std::string& out) { fs::create_directory(out); });
}

// Signals at moments no pause point marks (inside METIS, which traps
// SIGTERM itself, inside compression): whatever the moment, the run ends by
// the signal with --out untouched, or --out is whole (the run had finished,
// or the signal came after the rename and the note says so); never an error
// status, never a temporary left behind.
TEST_F(PrepInterrupt, PartitionStoppedAtVariedMomentsIsWholeOrUntouched) {
  const std::string big = inputs_.file("big.gcn");
  ASSERT_EQ(
      testing::run_command(prep_bin() + " synthetic --preset small --seed 0 --out " + big, logs_).exit_code,
      0);
  int interrupted = 0;
  for (const int ms : {20, 150, 250, 350, 450, 550, 700, 900}) {
    for (const int sig : {SIGINT, SIGTERM}) {
      SCOPED_TRACE(std::to_string(ms) + " ms, " + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
      ScratchDir out_dir;
      const std::string out = out_dir.file("parts");
      const pid_t pid = testing::spawn_shell(prep_bin() + " partition " + big + " --parts 2 --out " + out +
                                             " >/dev/null 2>" + logs_.file("varied.err"));
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      kill(pid, sig);
      const int code = testing::wait_exit_code(pid);
      const std::string err = testing::read_text(logs_.file("varied.err"));
      // A signal that lands after the folder's rename stops the run with
      // the signal's status, and the note says the output is whole.
      const bool written_whole =
          err.find("dgcn-prep: interrupted after " + out + " was written whole") != std::string::npos;
      if (code == 0 || written_whole) {
        EXPECT_TRUE(code == 0 || code == 128 + sig) << code << ": " << err;
        EXPECT_TRUE(fs::exists(out + "/partition.json")) << err;
        EXPECT_EQ(ScratchDir::entries_of(out_dir.path()), std::vector<std::string>{"parts"});
      } else {
        ++interrupted;
        EXPECT_EQ(code, 128 + sig) << err;
        EXPECT_TRUE(ScratchDir::entries_of(out_dir.path()).empty()) << err;
        EXPECT_NE(err.find("dgcn-prep: interrupted; nothing was written"), std::string::npos) << err;
      }
    }
  }
  EXPECT_GT(interrupted, 0) << "every run finished before its signal: the graph is too small to test this";
}

}  // namespace
}  // namespace dgcn
