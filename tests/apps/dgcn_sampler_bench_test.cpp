// dgcn-sampler-bench as a user runs it: one JSON object on stdout with the
// same digest for every thread count, and clear errors with exit status 1.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixtures.h"
#include "graph/store_format.h"
#include "partition/partition_files.h"
#include "sampling/test_graphs.h"

namespace dgcn {
namespace {

struct BenchRun {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SamplerBenchApp : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dgcn_sampler_bench_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  BenchRun bench(const std::string& args) {
    const char* bin_dir = std::getenv("DGCN_BIN_DIR");
    const std::string bin = std::string(bin_dir != nullptr ? bin_dir : "build/bin") + "/dgcn-sampler-bench";
    const auto out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd = bin + " " + args + " >" + out.string() + " 2>" + err.string();
    const int rc = std::system(cmd.c_str());
    return BenchRun{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(out), slurp(err)};
  }

  std::string save_graph() {
    const std::string path = (dir_ / "graph.gcn").string();
    save_store(testing::make_store(testing::skewed_random_edges(4000, 10, 3), 8, 5), path);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(SamplerBenchApp, PrintsOneJsonObjectWithTheSameDigestPerThreadCount) {
  const std::string graph = save_graph();
  BenchRun r = bench("--data " + graph +
                     " --num-neighbors 5,3,2 --batch-size 64 --threads 1,2 --batches 6 --limit-seconds 0.05");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["graph"]["nodes"], 4000);
  EXPECT_EQ(j["config"]["fanouts"], nlohmann::json({5, 3, 2}));
  ASSERT_EQ(j["runs"].size(), 2u);
  for (const auto& run : j["runs"]) {
    for (const char* key :
         {"batches_per_s", "sampled_edges_per_s", "nodes_per_batch", "consumer_wait_fraction",
          "limit_reads_per_s", "ratio_to_limit", "intra_batch_edges_per_s"}) {
      ASSERT_TRUE(run.contains(key)) << key;
      EXPECT_GT(run[key].get<double>(), key == std::string("consumer_wait_fraction") ? -1e-9 : 0.0) << key;
    }
  }
  EXPECT_EQ(j["runs"][0]["threads"], 1);
  EXPECT_EQ(j["runs"][1]["threads"], 2);
  EXPECT_EQ(j["runs"][0]["digest"], j["runs"][1]["digest"]);
  EXPECT_EQ(j["runs"][0]["feature_checksum"], j["runs"][1]["feature_checksum"]);
  EXPECT_NE(r.err.find("M edge/s"), std::string::npos) << "the table goes to stderr";

  // Another seed samples other batches.
  BenchRun other =
      bench("--data " + graph +
            " --num-neighbors 5,3,2 --batch-size 64 --threads 1 --batches 6 --limit-seconds 0.05 "
            "--seed 9 --no-gather");
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_NE(nlohmann::json::parse(other.out)["runs"][0]["digest"], j["runs"][0]["digest"]);
}

TEST_F(SamplerBenchApp, BadInputIsAClearError) {
  const std::string graph = save_graph();
  // A usage error (status 2) naming the flag and the element.
  BenchRun bad_fanout = bench("--data " + graph + " --num-neighbors 15,-2 --batches 2");
  EXPECT_EQ(bad_fanout.status, 2);
  EXPECT_NE(bad_fanout.err.find("--num-neighbors"), std::string::npos) << bad_fanout.err;
  EXPECT_NE(bad_fanout.err.find("element 2 '-2' is not an integer >= -1"), std::string::npos)
      << bad_fanout.err;
  EXPECT_TRUE(bad_fanout.out.empty());
  for (const char* list : {"15,,5", "''"}) {
    BenchRun empty = bench("--data " + graph + " --num-neighbors " + list);
    EXPECT_EQ(empty.status, 2) << list;
    EXPECT_NE(empty.err.find("empty"), std::string::npos) << empty.err;
  }
  BenchRun version = bench("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("dgcn-sampler-bench 0."), std::string::npos) << version.out;

  std::ofstream((dir_ / "junk.gcn").string()) << "not a graph";
  BenchRun junk = bench("--data " + (dir_ / "junk.gcn").string());
  EXPECT_EQ(junk.status, 1);
  EXPECT_NE(junk.err.find("junk.gcn"), std::string::npos) << junk.err;
  EXPECT_NE(junk.err.find("it is text (an edge list?)"), std::string::npos)
      << "a hint what it is: " << junk.err;

  BenchRun missing = bench("--data " + (dir_ / "none.gcn").string());
  EXPECT_EQ(missing.status, 2) << missing.err;

  // A part of a partitioned graph is named for what it is (not "batch 0 of
  // epoch -1" from inside the sampler's warm-up).
  WritePartitionOptions parts;
  parts.partition = {.parts = 2, .seed = 1, .threads = 2};
  write_partition(testing::community_store(), (dir_ / "p2").string(), parts);
  const std::string part = (dir_ / "p2" / "part-001.gcn").string();
  BenchRun on_part = bench("--data " + part + " --batches 2");
  EXPECT_EQ(on_part.status, 1) << on_part.err;
  EXPECT_NE(on_part.err.find(part + " is part 1 of 2 of a partitioned graph"), std::string::npos)
      << on_part.err;
  EXPECT_EQ(on_part.err.find("epoch -1"), std::string::npos) << on_part.err;

  // A usage error, caught while parsing (before the store is read).
  BenchRun zero_threads = bench("--data " + graph + " --threads 0 --batches 2");
  EXPECT_EQ(zero_threads.status, 2) << zero_threads.err;
  EXPECT_NE(zero_threads.err.find("--threads: '0': element 1 '0' must be >= 1"), std::string::npos)
      << zero_threads.err;
}

}  // namespace
}  // namespace dgcn
