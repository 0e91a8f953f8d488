// dgcn-mnist end to end: 1 and 2 ranks, two launchers as two "nodes" on
// loopback, torchrun, checkpoints and resume, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../datasets/dataset_files.h"
#include "ci_skip.h"
#include "distributed/launcher.h"
#include "json_output.h"
#include "run_command.h"

namespace dgcn {
namespace {

using nlohmann::json;
using testing::CommandResult;
using testing::json_lines;
using testing::run_command;
using testing::ScratchDir;
using testing::summary_of;

const std::string kMnist = DGCN_MNIST_BIN;

// The IDX header of unsigned bytes with these dimensions.
std::string header(std::vector<uint32_t> dims) {
  std::string h = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) h.push_back(static_cast<char>(d >> shift));
  }
  return h;
}

// A learnable toy set in MNIST format: 8x8 images, class c lights up row c
// (of 10 classes on 8 rows, classes 8 and 9 light columns 0 and 7), plus noise.
void write_toy_mnist(const std::string& dir, uint32_t train, uint32_t test) {
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (auto [prefix, count] : {std::pair{"train", train}, std::pair{"t10k", test}}) {
    std::string pixels, labels;
    for (uint32_t i = 0; i < count; ++i) {
      int c = static_cast<int>(next() % 10);
      labels.push_back(static_cast<char>(c));
      for (int y = 0; y < 8; ++y) {
        for (int x = 0; x < 8; ++x) {
          bool lit = c < 8 ? y == c : x == (c == 8 ? 0 : 7);
          pixels.push_back(static_cast<char>((lit ? 180 : 0) + next() % 60));
        }
      }
    }
    testing::write_gz(dir + "/" + prefix + "-images-idx3-ubyte.gz", header({count, 8, 8}) + pixels);
    testing::write_gz(dir + "/" + prefix + "-labels-idx1-ubyte.gz", header({count}) + labels);
  }
}

class DgcnMnist : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = scratch_.file("data");
    std::filesystem::create_directories(data_);
    write_toy_mnist(data_, 600, 200);
  }
  // Runs dgcn-mnist on the toy data with `flags`; returns the result.
  CommandResult mnist(const std::string& flags) {
    return run_command(kMnist + " --data " + data_ + " --timeout 30 " + flags, scratch_);
  }
  ScratchDir scratch_;
  std::string data_;
};

TEST_F(DgcnMnist, OneAndTwoRanksLearnAndPrintJson) {
  for (int ranks : {1, 2}) {
    auto r = mnist("--epochs 3 --lr 0.1 --nproc-per-node " + std::to_string(ranks));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 4u) << "one line per epoch, then the summary (rank 0 only): " << r.out;
    for (int e = 0; e < 3; ++e) {
      EXPECT_EQ(lines[e]["epoch"], e + 1);
      EXPECT_TRUE(lines[e].contains("loss") && lines[e].contains("test_acc")) << lines[e];
    }
    EXPECT_LT(lines[2]["loss"].get<double>(), lines[0]["loss"].get<double>());
    const json& s = lines[3];
    EXPECT_EQ(s["world_size"], ranks);
    EXPECT_EQ(s["epochs"], 3);
    EXPECT_GT(s["test_acc"].get<double>(), 0.9) << "the toy classes are linearly separable";
    EXPECT_EQ(s["param_digest"].get<std::string>().size(), 16u);
  }
}

TEST_F(DgcnMnist, TwoLaunchersAsTwoNodesMatchOneLauncherWithTwoRanks) {
  auto single = mnist("--epochs 2 --nproc-per-node 2");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  int port = find_free_port();
  std::string common = kMnist + " --data " + data_ +
                       " --timeout 30 --epochs 2 --nnodes 2 --nproc-per-node 1 " +
                       "--master-addr 127.0.0.1 --master-port " + std::to_string(port);
  std::string n0 = scratch_.file("node0"), n1 = scratch_.file("node1");
  auto both = run_command("(" + common + " --node-rank 0 >" + n0 + ".out 2>" + n0 + ".err; echo $? >" + n0 +
                              ".rc) & (" + common + " --node-rank 1 >" + n1 + ".out 2>" + n1 +
                              ".err; echo $? >" + n1 + ".rc) & wait",
                          scratch_);
  ASSERT_EQ(testing::read_text(n0 + ".rc"), "0\n") << testing::read_text(n0 + ".err");
  ASSERT_EQ(testing::read_text(n1 + ".rc"), "0\n") << testing::read_text(n1 + ".err");
  EXPECT_TRUE(testing::read_text(n1 + ".out").empty()) << "only rank 0 prints";
  json s = json_lines(testing::read_text(n0 + ".out")).back();
  EXPECT_EQ(s["world_size"], 2);
  // Same ranks, same seed, same shards: bit-identical weights.
  EXPECT_EQ(s["param_digest"], summary_of(single)["param_digest"]);
}

TEST_F(DgcnMnist, ResumeEqualsAnUninterruptedRun) {
  std::string a = scratch_.file("ckpt-a"), b = scratch_.file("ckpt-b");
  auto full = mnist("--epochs 3 --nproc-per-node 2 --checkpoint " + a);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  // The newest checkpoint and the previous one are kept, nothing else.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(a)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"checkpoint-000002.pt", "checkpoint-000003.pt"}));

  auto first = mnist("--epochs 1 --nproc-per-node 2 --checkpoint " + b);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto rest = mnist("--epochs 3 --nproc-per-node 2 --checkpoint " + b + " --resume");
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  auto lines = json_lines(rest.out);
  ASSERT_EQ(lines.size(), 3u) << "epochs 2 and 3, then the summary: " << rest.out;
  EXPECT_EQ(lines[0]["epoch"], 2);
  EXPECT_EQ(summary_of(rest)["first_epoch"], 2);
  EXPECT_EQ(summary_of(rest)["param_digest"], summary_of(full)["param_digest"]);

  // Resuming a finished run trains nothing and keeps the weights.
  auto again = mnist("--epochs 3 --checkpoint " + b + " --resume");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(summary_of(again)["param_digest"], summary_of(full)["param_digest"]);

  // The resume policy the GCN run has too: another seed is another run.
  auto other_seed = mnist("--epochs 4 --seed 5 --checkpoint " + b + " --resume");
  EXPECT_EQ(other_seed.exit_code, 1);
  EXPECT_NE(other_seed.err.find("belongs to another run: seed was 0, this run has 5"), std::string::npos)
      << other_seed.err;
  EXPECT_TRUE(std::filesystem::exists(b + "/checkpoint-000003.pt"));
  EXPECT_FALSE(std::filesystem::exists(b + "/checkpoint-000004.pt"));
}

TEST_F(DgcnMnist, CorruptCheckpointFailsOnEveryRankWithoutHanging) {
  std::string dir = scratch_.file("ckpt");
  ASSERT_EQ(mnist("--epochs 1 --checkpoint " + dir).exit_code, 0);
  std::ofstream(dir + "/checkpoint-000001.pt", std::ios::trunc) << "not a checkpoint";
  auto r = mnist("--epochs 2 --nproc-per-node 2 --checkpoint " + dir + " --resume");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("checkpoint-000001.pt: not a readable pickle archive"), std::string::npos) << r.err;
}

TEST_F(DgcnMnist, BadInputIsAClearErrorWithExitStatus1AndBadUsage2) {
  auto missing = run_command(kMnist + " --data " + scratch_.path() + "/nowhere --nproc-per-node 2", scratch_);
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("train-images-idx3-ubyte"), std::string::npos) << missing.err;
  auto resume = mnist("--resume");
  EXPECT_EQ(resume.exit_code, 2) << "a usage error";
  EXPECT_NE(resume.err.find("--resume needs --checkpoint"), std::string::npos) << resume.err;
  auto nccl = mnist("--backend nccl");
  EXPECT_EQ(nccl.exit_code, 2) << "a usage error";
  EXPECT_NE(nccl.err.find("dgcn-mnist: error: --backend nccl"), std::string::npos) << nccl.err;
  EXPECT_NE(nccl.err.find("--backend nccl"), std::string::npos) << nccl.err;
  auto negative = mnist("--batch-size -3");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("--batch-size: '-3' must be > 0"), std::string::npos) << negative.err;
  EXPECT_LT(negative.err.size(), 200u) << "no 309-digit range bound: " << negative.err;
  auto device = mnist("--device tpu");
  EXPECT_EQ(device.exit_code, 2);
  EXPECT_NE(device.err.find("expected cpu, cuda or cuda:N"), std::string::npos) << device.err;
}

TEST_F(DgcnMnist, RunsUnderTorchrun) {
  auto ours = mnist("--epochs 1 --nproc-per-node 2");
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  // torchrun hosts the store itself (TORCHELASTIC_USE_AGENT_STORE=True); the
  // ranks connect to it as clients.
  auto r = run_command(testing::torchrun() + " --nproc_per_node 2 --master_port " +
                           std::to_string(find_free_port()) + " --no_python " + kMnist + " --data " + data_ +
                           " --timeout 30 --epochs 1",
                       scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = summary_of(r);
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_EQ(s["param_digest"], summary_of(ours)["param_digest"]);
}

TEST_F(DgcnMnist, FashionMnistReachesTheLinearBaselineRegion) {
  const std::string fashion = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(fashion)) DGCN_SKIP_OUTSIDE_CI(fashion << " is absent");
  auto r = run_command(kMnist + " --epochs 1 --nproc-per-node 2", scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // One epoch of SGD already gets a linear model to ~80%; 84% needs a few.
  EXPECT_GT(summary_of(r)["test_acc"].get<double>(), 0.75) << r.out;
}

}  // namespace
}  // namespace dgcn
