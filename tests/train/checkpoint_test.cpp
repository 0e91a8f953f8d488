// Checkpoints: restored on every rank (rank 0 reads and broadcasts), and
// readable by PyTorch's torch.load in Python (the environment's torch).
#include <gtest/gtest.h>

#include <filesystem>

#include "worker.h"

namespace dgcn {
namespace {

using testing::python;
using testing::run_command;
using testing::run_worker;
using testing::ScratchDir;

TEST(Checkpoint, RestoresModelAndOptimizerOnEveryRank) {
  ScratchDir out;
  auto run = run_worker(2, {"checkpoint"}, out);
  ASSERT_EQ(run.launch.exit_code, 0) << run.launch.message;
  for (int r = 0; r < 2; ++r) {
    const auto& j = run.ranks[r];
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["epoch"], 4);
    EXPECT_EQ(j["seed"], 1234);
    EXPECT_EQ(j["config"]["model"]["kind"], "test-net") << "the run's record comes back on every rank";
    // One more SGD-with-momentum step after restoring matches the original's:
    // parameters and momentum buffers both came back.
    EXPECT_TRUE(j["same_after_step"].get<bool>()) << "rank " << r;
  }
  EXPECT_TRUE(std::filesystem::exists(out.file("ckpt/checkpoint-000004.pt")));
}

TEST(Checkpoint, TorchLoadInPythonReadsTheWeights) {
  ScratchDir out;
  auto run = run_worker(1, {"checkpoint"}, out);
  ASSERT_EQ(run.launch.exit_code, 0) << run.launch.message;
  std::string path = run.ranks[0]["path"];
  std::string script = out.file("read.py");
  std::ofstream(script) << "import json, sys, torch\n"
                           "d = torch.load(sys.argv[1])\n"
                           "out = {k: [float(v.double().sum()), list(v.shape)] for k, v in d.items() if "
                           "k.startswith('model.')}\n"
                           "out['epoch'] = int(d['epoch']); out['seed'] = int(d['seed']); "
                           "out['format'] = int(d['format']); out['config'] = json.loads(d['config'])\n"
                           "print(json.dumps(out))\n";
  auto py = run_command(python() + " " + script + " " + path, out);
  ASSERT_EQ(py.exit_code, 0) << py.err;
  auto loaded = nlohmann::json::parse(py.out);
  EXPECT_EQ(loaded["epoch"], 4);
  EXPECT_EQ(loaded["seed"], 1234);
  EXPECT_EQ(loaded["format"], 2);
  EXPECT_EQ(loaded["config"]["model"]["kind"], "test-net");
  const auto& params = run.ranks[0]["params"];
  ASSERT_EQ(params.size(), 10u);
  for (const auto& [name, expected] : params.items()) {
    std::string key = "model." + name;
    ASSERT_TRUE(loaded.contains(key)) << key << " missing from what torch.load returned: " << py.out;
    EXPECT_EQ(loaded[key][1], expected["shape"]) << key;
    EXPECT_NEAR(loaded[key][0].get<double>(), expected["sum"].get<double>(), 1e-5) << key;
  }
}

}  // namespace
}  // namespace dgcn
