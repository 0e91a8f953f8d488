// Where this process sits in a distributed job, read from the environment that
// torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT). dgcn's own launcher sets the same variables, and so can an
// srun/mpirun wrapper; see docs/distributed.md, "Running on several processes".
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace dgcn {

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: no TCP rendezvous (single process, in-process store)
  // torchrun's agent already hosts the TCPStore at MASTER_ADDR:MASTER_PORT
  // (TORCHELASTIC_USE_AGENT_STORE=True): every rank connects as a client and
  // uses keys under /worker/attempt_<TORCHELASTIC_RESTART_COUNT>, as Python does.
  bool use_agent_store = false;
  int restart_count = 0;
  bool from_environment = false;  // false: the single-process defaults above

  // "rank 1/4 (local 1/2, master 10.0.0.1:29500)"
  std::string describe() const;
};

// Returns the value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// Parses the rank variables. When RANK is unset, returns the single-process
// defaults (rank 0 of 1). When RANK is set, all six variables must be set and
// consistent (0 <= RANK < WORLD_SIZE, 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE <=
// WORLD_SIZE, 1 <= MASTER_PORT <= 65535); otherwise throws dgcn::Error naming
// the variable and the value seen.
RankEnv parse_rank_env(const EnvLookup& lookup);

// parse_rank_env over this process's environment.
RankEnv rank_env_from_process();

// Note [Restarts] (distributed/launcher.h): a rank started again by a
// launcher (env.restart_count > 0, dgcn's or torchrun's) resumes from the
// newest checkpoint in `checkpoint_dir`: sets `resume` and logs it; without
// a checkpoint folder it warns that training starts again from epoch 1.
void resume_after_restart(const RankEnv& env, const std::string& checkpoint_dir, bool& resume);

// True when RANK is set in this process's environment (we were started as one
// rank of a job, by dgcn's launcher, torchrun or a wrapper).
bool started_as_rank();

}  // namespace dgcn
