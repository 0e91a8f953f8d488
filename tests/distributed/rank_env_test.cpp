#include "distributed/rank_env.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "base/error.h"
#include "ci_skip.h"
#include "run_command.h"

namespace dgcn {
namespace {

using Vars = std::map<std::string, std::string>;

RankEnv parse(const Vars& vars) {
  return parse_rank_env([&](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

Vars torchrun_vars() {
  return {{"RANK", "3"},
          {"WORLD_SIZE", "4"},
          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "10.0.0.1"},
          {"MASTER_PORT", "29500"}};
}

// The message must name the variable and the value seen.
void expect_error(const Vars& vars, const std::string& needle) {
  try {
    parse(vars);
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RankEnv, SingleProcessWhenRankUnset) {
  RankEnv env = parse({});
  EXPECT_FALSE(env.from_environment);
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.local_world_size, 1);
  EXPECT_EQ(env.master_port, 0);
}

TEST(RankEnv, ReadsTorchrunVariables) {
  RankEnv env = parse(torchrun_vars());
  EXPECT_TRUE(env.from_environment);
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 2);
  EXPECT_EQ(env.master_addr, "10.0.0.1");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_FALSE(env.use_agent_store);
  EXPECT_EQ(env.describe(), "rank 3/4 (local 1/2, master 10.0.0.1:29500)");
}

TEST(RankEnv, TorchrunAgentStore) {
  Vars vars = torchrun_vars();
  vars.emplace("TORCHELASTIC_USE_AGENT_STORE", "True");
  vars.emplace("TORCHELASTIC_RESTART_COUNT", "2");
  RankEnv env = parse(vars);
  EXPECT_TRUE(env.use_agent_store);
  EXPECT_EQ(env.restart_count, 2);
  Vars no_agent = torchrun_vars();
  no_agent.emplace("TORCHELASTIC_USE_AGENT_STORE", "False");
  EXPECT_FALSE(parse(no_agent).use_agent_store);
}

TEST(RankEnv, RejectsMissingAndInconsistentValues) {
  for (const char* name : {"WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
    Vars vars = torchrun_vars();
    vars.erase(name);
    expect_error(vars, name);
  }
  auto with = [](const char* name, const char* value) {
    Vars vars = torchrun_vars();
    vars[name] = value;
    return vars;
  };
  expect_error(with("RANK", "4"), "RANK=4 is outside [0, WORLD_SIZE=4)");
  expect_error(with("RANK", "-1"), "RANK=-1");
  expect_error(with("RANK", "two"), "RANK='two' is not an integer");
  expect_error(with("RANK", "1x"), "RANK='1x'");
  expect_error(with("WORLD_SIZE", "0"), "WORLD_SIZE=0");
  expect_error(with("LOCAL_RANK", "2"), "LOCAL_RANK=2 is outside [0, LOCAL_WORLD_SIZE=2)");
  expect_error(with("LOCAL_WORLD_SIZE", "5"), "LOCAL_WORLD_SIZE=5 must be in [1, WORLD_SIZE=4]");
  expect_error(with("MASTER_PORT", "70000"), "MASTER_PORT=70000");
  expect_error(with("MASTER_PORT", "0"), "MASTER_PORT=0");
  expect_error(with("MASTER_ADDR", ""), "MASTER_ADDR");
}

// dgcn-rank-env (apps/, copied beside the binaries) maps srun's and mpirun's variables to these.
TEST(RankEnv, SrunAndMpirunWrapperScript) {
  const char* source = std::getenv("DGCN_SOURCE_DIR");
  if (source == nullptr) DGCN_SKIP_OUTSIDE_CI("DGCN_SOURCE_DIR is not set (run through ctest)");
  testing::ScratchDir scratch;
  std::string script = std::string(source) + "/apps/dgcn-rank-env";
  std::string print =
      " sh -c 'for v in RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT; do "
      "eval echo $v=\\$$v; done'";
  auto run = [&](const std::string& vars) {
    auto r = testing::run_command("env -i PATH=/usr/bin:/bin " + vars + " " + script + print, scratch);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Vars seen;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      seen[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
    }
    return parse(seen);
  };
  RankEnv slurm =
      run("SLURM_PROCID=3 SLURM_NTASKS=4 SLURM_LOCALID=1 SLURM_TASKS_PER_NODE='2(x2)' MASTER_ADDR=n0");
  EXPECT_EQ(slurm.describe(), "rank 3/4 (local 1/2, master n0:29500)");
  RankEnv ompi =
      run("OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=0 "
          "OMPI_COMM_WORLD_LOCAL_SIZE=2 "
          "MASTER_ADDR=10.0.0.1 MASTER_PORT=1234");
  EXPECT_EQ(ompi.describe(), "rank 2/4 (local 0/2, master 10.0.0.1:1234)");
  RankEnv mpich = run("PMI_RANK=1 PMI_SIZE=2 MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2 MASTER_ADDR=h");
  EXPECT_EQ(mpich.describe(), "rank 1/2 (local 1/2, master h:29500)");
  auto missing = testing::run_command(
      "env -i PATH=/usr/bin:/bin OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 "
      "OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=1 " +
          script + " true",
      scratch);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("set MASTER_ADDR"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace dgcn
