// One convention across the binaries: --version, usage errors with status 2
// that name the flag and the accepted values (no 309-digit bounds), strict
// --num-neighbors lists, and a hint when a file of the wrong kind is given.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "run_command.h"

namespace dgcn {
namespace {

using testing::run_command;
using testing::ScratchDir;

std::string bin(const std::string& name) {
  const char* dir = std::getenv("DGCN_BIN_DIR");
  return std::string(dir ? dir : "build/bin") + "/" + name;
}

// The binaries of this build (the torch ones only in a torch build).
std::vector<std::string> binaries() {
  std::vector<std::string> out;
  for (const char* name : {"dgcn-prep", "dgcn-sampler-bench", "dgcn-train", "dgcn-predict", "dgcn-mnist",
                           "dgcn-spmm-bench", "dgcn-ddp-bench"}) {
    if (std::filesystem::exists(bin(name))) out.push_back(name);
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
  };
  for (const Case& c : cases) {
    if (!std::filesystem::exists(bin(c.binary))) continue;
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
  if (std::filesystem::exists(bin("dgcn-train"))) {
    auto r = run_command(bin("dgcn-train") + " --data " + dir.file("cora.npz") + " --epochs 1", dir);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("dgcn-prep npz --file " + dir.file("cora.npz") + " --out cora.gcn"),
              std::string::npos)
        << r.err;
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

}  // namespace
}  // namespace dgcn
