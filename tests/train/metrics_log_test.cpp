#include "train/metrics_log.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

std::vector<std::string> lines_of(const std::string& path, bool* ends_with_newline) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  *ends_with_newline = text.empty() || text.back() == '\n';
  std::vector<std::string> out;
  for (size_t b = 0; b < text.size();) {
    const size_t e = text.find('\n', b);
    out.push_back(text.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

// A disk that fills up mid-line (RLIMIT_FSIZE, in a child process so the
// limit stays there): the file keeps whole JSON lines only, and a resumed
// run appends after them.
TEST(MetricsLog, AFullDiskLeavesWholeLinesOnly) {
  testing::ScratchDir dir;
  const std::string path = dir.file("m.jsonl");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // write(2) fails with EFBIG instead
    rlimit limit{1000, 1000};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    try {
      MetricsLog log(path, -1);
      for (int epoch = 1; epoch < 100; ++epoch) log.write({{"epoch", epoch}, {"pad", std::string(90, 'x')}});
    } catch (const Error&) {
      _exit(0);  // the expected stop
    }
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "3: no rlimit; 4: the disk never filled";
  bool newline = false;
  const std::vector<std::string> lines = lines_of(path, &newline);
  EXPECT_TRUE(newline) << "the file ends in half a line";
  ASSERT_GE(lines.size(), 5u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json j = nlohmann::json::parse(lines[i]);  // throws on half a line
    EXPECT_EQ(j["epoch"], static_cast<int>(i) + 1);
  }
  {
    MetricsLog resumed(path, 3);
    resumed.write({{"epoch", 4}});
  }
  const std::vector<std::string> after = lines_of(path, &newline);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(nlohmann::json::parse(after[3]), nlohmann::json({{"epoch", 4}}));
}

// The curve a resumed run draws before its own epochs: the epoch lines
// (record lines skipped), valid/test only where the epoch was evaluated, up
// to a line cut short.
TEST(MetricsLog, TheCurveOfAMetricsFileIsItsEpochLines) {
  testing::ScratchDir dir;
  const std::string path = dir.file("m.jsonl");
  std::ofstream(path) << R"({"config": {}, "first_epoch": 1})"
                      << "\n"
                      << R"({"epoch": 1, "loss": 2.5, "train_acc": 0.25})"
                      << "\n"
                      << R"({"epoch": 2, "loss": 1.5, "train_acc": 0.5, "valid_acc": 0.4, "test_acc": 0.375})"
                      << "\n"
                      << R"({"config": {}, "first_epoch": 3})"
                      << "\n"
                      << R"({"epoch": 3, "loss": 1.25, "train_acc": 0.75})"
                      << "\n"
                      << R"({"epoch": 4, "lo)";
  const std::vector<CurvePoint> c = curve_of_metrics_file(path, "acc");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].epoch, 1);
  EXPECT_EQ(c[0].loss, 2.5);
  EXPECT_EQ(c[0].train, 0.25);
  EXPECT_FALSE(c[0].evaluated);
  EXPECT_EQ(c[1].epoch, 2);
  EXPECT_TRUE(c[1].evaluated);
  EXPECT_EQ(c[1].valid, 0.4);
  EXPECT_EQ(c[1].test, 0.375);
  EXPECT_EQ(c[2].epoch, 3);
  EXPECT_EQ(c[2].train, 0.75);
  EXPECT_TRUE(curve_of_metrics_file(dir.file("none.jsonl"), "acc").empty());
}

}  // namespace
}  // namespace dgcn
