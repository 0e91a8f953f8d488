// One convention across the binaries: --version, usage errors with status 2
// that name the flag and the accepted values (no 309-digit bounds), strict
// --num-neighbors lists, and a hint when a file of the wrong kind is given.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "run_command.h"

namespace dgcn {
namespace {

using testing::run_command;
using testing::ScratchDir;

std::string bin(const std::string& name) {
  return testing::binary(name);
}

// Whether this build makes `name`: the torch binaries only in a torch build
// (CMake defines DGCN_TORCH_APPS there).
bool built_here(const std::string& name) {
#ifdef DGCN_TORCH_APPS
  (void)name;
  return true;
#else
  return name == "dgcn-prep" || name == "dgcn-sampler-bench";
#endif
}

// The binaries of this build; one it makes but that is missing from
// DGCN_BIN_DIR fails the test (its cases would otherwise pass on nothing).
std::vector<std::string> binaries() {
  std::vector<std::string> out;
  for (const char* name : {"dgcn-prep", "dgcn-sampler-bench", "dgcn-train", "dgcn-predict", "dgcn-mnist",
                           "dgcn-spmm-bench", "dgcn-ddp-bench"}) {
    if (!built_here(name)) continue;
    EXPECT_TRUE(std::filesystem::exists(bin(name))) << bin(name) << " is not built (this build makes it)";
    out.push_back(name);
  }
  return out;
}

TEST(CliConventions, EveryBinaryPrintsItsVersion) {
  ScratchDir dir;
  ASSERT_GE(binaries().size(), 2u);
  for (const std::string& name : binaries()) {
    auto r = run_command(bin(name) + " --version", dir);
    EXPECT_EQ(r.exit_code, 0) << name;
    EXPECT_EQ(r.out.rfind(name + " 0.", 0), 0u) << name << ": " << r.out;
    // Whether --precision bf16 has the CPU's bf16 instructions (base/cpu_features.h).
    EXPECT_NE(r.out.find("\nCPU bf16 (this machine): AVX512-BF16 "), std::string::npos)
        << name << ": " << r.out;
    auto help = run_command(bin(name) + " --help", dir);
    EXPECT_EQ(help.exit_code, 0) << name;
    EXPECT_EQ(help.out.find("(default"), std::string::npos) << name << " shows defaults one way (NAME=value)";
  }
}

TEST(CliConventions, UsageErrorsExitTwoNamingTheFlagAndWhatIsAccepted) {
  ScratchDir dir;
  struct Case {
    std::string binary, flags, message;
  };
  const std::vector<Case> cases = {
      {"dgcn-train", "--batch-size -3", "--batch-size: '-3' must be > 0"},
      {"dgcn-train", "--num-neighbors 15,,5", "--num-neighbors: '15,,5': element 2 is empty"},
      {"dgcn-train", "--num-neighbors ''", "--num-neighbors: the list is empty"},
      {"dgcn-train", "--num-neighbors 15,x", "element 2 'x' is not an integer >= -1"},
      {"dgcn-train", "--device gpu", "'gpu' is not a device; expected cpu, cuda or cuda:N"},
      {"dgcn-train", "--head conv", "--head: conv not in {none,linear}"},
      {"dgcn-train", "--nproc-per-node 0", "--nproc-per-node: Value 0 not in range 1 to 4096"},
      {"dgcn-predict", "--checkpoint c --data d --out o --layer -1", "--layer: '-1' must be >= 0"},
      {"dgcn-prep", "synthetic --preset tiny --out x.gcn --threads -2", "--threads: '-2' must be >= 0"},
      {"dgcn-spmm-bench", "--reps 0", "--reps: '0' must be > 0"},
      {"dgcn-train", "--batch-size 99999999999",
       "--batch-size: Value 99999999999 not in range 1 to 1073741824"},
      {"dgcn-predict", "--checkpoint c --data d --out o --nodes tset",
       "'tset' is not a node set; choose all, train, valid, test or FILE.npy"},
      {"dgcn-ddp-bench", "--batch 5", "did you mean --batch-size?"},
      // A mistyped flag gets the nearest one the command takes.
      {"dgcn-train", "--num-neighbours 15,10", "did you mean --num-neighbors?"},
      {"dgcn-prep", "synthetic --preset tiny --out x.gcn --thread 2", "did you mean --threads?"},
      {"dgcn-sampler-bench", "--data /dev/null --batch-sise 5", "did you mean --batch-size?"},
      // One list syntax: commas, in one argument.
      {"dgcn-sampler-bench", "--data /dev/null --threads 1 2", "The following argument was not expected: 2"},
      {"dgcn-sampler-bench", "--data /dev/null --threads 1,x",
       "--threads: '1,x': element 2 'x' is not a number"},
      {"dgcn-spmm-bench", "--new-fraction 0.9 0.5", "The following argument was not expected: 0.5"},
      {"dgcn-sampler-bench", "--data /dev/null --threads 2,0",
       "--threads: '2,0': element 2 '0' must be >= 1"},
      // A missing input file is a usage error naming its flag, in every binary.
      {"dgcn-prep", "npz --file /no/such/cora.npz --out x.gcn",
       "--file: File does not exist: /no/such/cora.npz"},
      {"dgcn-train", "--data /no/such/cora.gcn", "--data: Path does not exist: /no/such/cora.gcn"},
      {"dgcn-sampler-bench", "--data /no/such/cora.gcn", "--data: File does not exist: /no/such/cora.gcn"},
  };
  for (const Case& c : cases) {
    if (!built_here(c.binary)) {
      std::cout << "case not run: " << c.binary << " " << c.flags
                << ": this build (no LibTorch) does not make " << c.binary << "\n";
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(bin(c.binary))) << bin(c.binary) << " is not built";
    auto r = run_command(bin(c.binary) + " " + c.flags, dir);
    EXPECT_EQ(r.exit_code, 2) << c.binary << " " << c.flags << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.binary << " " << c.flags << ": " << r.err;
    EXPECT_EQ(r.err.rfind(c.binary + ": error: ", 0), 0u) << "one shape for every binary: " << r.err;
    EXPECT_LT(r.err.size(), 400u) << r.err;
  }
}

TEST(CliConventions, AFileOfTheWrongKindGetsAHint) {
  ScratchDir dir;
  // A zip (as every .npz is) given to dgcn-train.
  std::ofstream(dir.file("cora.npz"), std::ios::binary)
      << std::string("PK\x03\x04", 4) << std::string(200, '\0');
  if (built_here("dgcn-train")) {
    auto r = run_command(bin("dgcn-train") + " --data " + dir.file("cora.npz") + " --epochs 1", dir);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("dgcn-prep npz --file " + dir.file("cora.npz") + " --out cora.gcn"),
              std::string::npos)
        << r.err;
  }
  // A checkpoint (a PyTorch zip archive) given as --data: it is a
  // checkpoint, not a .npz to convert. One of dgcn-train's own (tensors
  // first), and one as torch.save writes them (archive/data.pkl first).
  const std::string name = "archive/data.pkl";
  std::string header("PK\x03\x04", 4);
  header += std::string(22, '\0');
  header += static_cast<char>(name.size());
  header += std::string(3, '\0');
  std::ofstream(dir.file("saved.pt"), std::ios::binary) << header << name << std::string(200, '\0');
  if (std::filesystem::exists(bin("dgcn-train"))) {
    ASSERT_EQ(
        run_command(bin("dgcn-train") + " --preset tiny --epochs 1 --checkpoint " + dir.file("ckpt"), dir)
            .exit_code,
        0);
    for (const std::string& pt : {dir.file("ckpt/best.pt"), dir.file("saved.pt")}) {
      auto r = run_command(bin("dgcn-train") + " --data " + pt + " --epochs 1", dir);
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_NE(r.err.find("it is a PyTorch archive, like a dgcn-train checkpoint"), std::string::npos)
          << r.err;
      const std::string folder = std::filesystem::path(pt).parent_path().string();
      EXPECT_NE(r.err.find("dgcn-train --checkpoint " + folder + " --resume"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("dgcn-predict --checkpoint " + pt), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("dgcn-prep npz"), std::string::npos) << "not a .npz: " << r.err;
    }
  }
  // A .gcn given to the edge-list reader.
  std::ofstream(dir.file("g.gcn"), std::ios::binary)
      << std::string("\x89GCN\r\n\x1a\n", 8) << std::string(200, 'x');
  auto e = run_command(
      bin("dgcn-prep") + " edgelist --file " + dir.file("g.gcn") + " --out " + dir.file("o.gcn"), dir);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find("not an edge list: it is a .gcn graph store"), std::string::npos) << e.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.gcn")));
}

// A fresh run never replaces what a --metrics-out file holds (as a used
// --checkpoint folder is refused): a usage error before anything is loaded.
TEST(CliConventions, AFreshRunRefusesAMetricsFileThatHoldsLines) {
  if (!std::filesystem::exists(bin("dgcn-train"))) GTEST_SKIP() << "dgcn-train is not built (no LibTorch)";
  ScratchDir dir;
  const std::string metrics = dir.file("m.jsonl");
  const std::string before = "{\"config\": {}, \"first_epoch\": 1}\n{\"epoch\": 1, \"loss\": 1.5}\n";
  std::ofstream(metrics) << before;
  auto r = run_command(bin("dgcn-train") + " --preset tiny --epochs 1 --metrics-out " + metrics, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--metrics-out " + metrics + " already holds 2 lines of another run"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(testing::read_text(metrics), before) << "nothing the user had is lost";
  // An empty file is no one's run: it is written.
  std::ofstream(metrics, std::ios::trunc).close();
  r = run_command(bin("dgcn-train") + " --preset tiny --epochs 1 --metrics-out " + metrics, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(testing::read_text(metrics).find("\"epoch\":1"), std::string::npos);
  auto help = run_command(bin("dgcn-train") + " --help", dir);
  EXPECT_EQ(help.out.find("Append one JSON line"), std::string::npos) << "the help says what it does";
  EXPECT_NE(help.out.find("A fresh run refuses a FILE"), std::string::npos) << help.out;
}

// The progress line names each figure and keeps digits where epochs are
// short (a tiny epoch once printed "(0.0 s) | 0.0 s: wait 0.0, compute 0.0").
TEST(CliConventions, TheProgressLineLabelsItsSecondsWithDigitsForShortEpochs) {
  if (!std::filesystem::exists(bin("dgcn-train"))) GTEST_SKIP() << "dgcn-train is not built (no LibTorch)";
  ScratchDir dir;
  auto r = run_command(bin("dgcn-train") + " --preset tiny --epochs 1 --threads 1", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Below 1 s three decimals, below 10 s two, and so on.
  const std::string secs = R"((0\.\d{3}|[1-9]\.\d{2}|[1-9]\d\.\d|\d{3,}))";
  const std::regex line(
      "epoch   1  loss [0-9.]+  train acc [0-9.]+  valid acc [0-9.]+  test [0-9.]+  \\(evaluation " + secs +
      " s\\)  \\| training " + secs + " s: sampling wait " + secs + ", compute " + secs + ", other " + secs);
  EXPECT_TRUE(std::regex_search(r.err, line)) << r.err;
}

// The sampler bench's table columns are explained where a user looks.
TEST(CliConventions, TheSamplerBenchHelpExplainsEveryColumn) {
  ScratchDir dir;
  auto help = run_command(bin("dgcn-sampler-bench") + " --help", dir);
  ASSERT_EQ(help.exit_code, 0);
  for (const char* column :
       {"threads ", "batch/s ", "M edge/s ", "M e/cpu-s ", "M intra/s ", "k node/b ", "cpu ", "ldr b/s ",
        "wait ", "M read/s ", "M r/cpu-s ", "ratio ", "r/cpu ", "digest "}) {
    EXPECT_NE(help.out.find(std::string("\n  ") + column), std::string::npos) << column << " in " << help.out;
  }
}

}  // namespace
}  // namespace dgcn
