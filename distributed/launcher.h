// The built-in launcher: starts N local ranks of a program with the torchrun
// rank variables set (distributed/rank_env.h) and supervises them.
//
// Note [Launcher supervision]
// Each rank runs in its own process group (so a stop reaches anything it
// started) and dies with the launcher (PR_SET_PDEATHSIG). The launcher waits
// on one pidfd per rank plus a self-pipe for SIGINT/SIGTERM/SIGHUP; it never
// polls in a loop. When a rank exits non-zero or is killed, the launcher
// sends SIGTERM to every other rank at once, SIGKILL after `stop_grace`, and
// returns that rank's status; it does not wait for a collective to time out.
// A rank that hangs without failing is bounded by the collective timeout
// inside the ranks: its peers' collectives fail after `timeout`, they exit
// non-zero, and the first case applies.
//
// Note [Restarts]
// With max_restarts > 0, once every rank of a failed start has exited, the
// launcher logs the failure and starts all local ranks again, with
// TORCHELASTIC_RESTART_COUNT = the number of the start (0 first), as
// torchrun --max_restarts does, and a fresh store port on a single node. A
// rank that sees a restart count > 0 resumes from the newest checkpoint of
// its --checkpoint folder on its own (apps/dgcn_train.cpp), so both
// launchers restart the same way. A signal to the launcher (SIGINT, SIGTERM)
// ends the job; it is never a cause to restart.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace dgcn {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  // Node 0's address. Empty: 127.0.0.1, allowed only with nnodes == 1 (a
  // single-node job rendezvouses over loopback).
  std::string master_addr;
  // 0: a free loopback port when nnodes == 1, 29500 otherwise (torchrun's default).
  int master_port = 0;
  // Collective timeout the ranks use (also for the rendezvous); see the Note.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // How long stopped ranks get between SIGTERM and SIGKILL (capped by timeout).
  std::chrono::milliseconds stop_grace{std::chrono::seconds(5)};
  // Note [Restarts]: when a rank fails, every local rank is stopped and
  // started again, up to this many times (one node only).
  int max_restarts = 0;

  // True when the options ask for more than this one process.
  bool wanted() const { return nproc_per_node > 1 || nnodes > 1; }
};

// Adds --nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port
// and --timeout (seconds) to `app`, storing into `options`.
void add_launch_flags(CLI::App& app, LaunchOptions& options);

struct LaunchResult {
  int exit_code = 0;               // 0, the failed rank's exit code, or 128 + signal
  std::optional<int> failed_rank;  // global rank of the first rank that failed
  std::string message;             // one line for stderr; empty on success
  int restarts = 0;                // how often the ranks were started again
  // The distinct error lines the ranks of the last start reported, printed
  // once each on stderr (Note [One error per job] in base/error_report.h).
  std::vector<std::string> rank_errors;
};

// Starts options.nproc_per_node processes running `argv` (argv[0] is the
// program path, looked up as execv does: no PATH search) with RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
// GROUP_RANK set (plus OMP_NUM_THREADS = cores / nproc_per_node when unset),
// and supervises them (Note [Launcher supervision]). Returns when every rank
// has exited. Throws dgcn::Error on invalid options or when a process cannot
// be started.
LaunchResult run_local_ranks(const LaunchOptions& options, const std::vector<std::string>& argv);

// For apps: when this process was not started as a rank (RANK unset) and
// `options` ask for more than one process, re-runs this program's own binary
// with the same arguments as the local ranks, prints the failure (if any) on
// stderr, and returns the exit code for main(). Otherwise returns nullopt and
// the caller goes on as a rank (or as the only process).
std::optional<int> launch_if_requested(const LaunchOptions& options, int argc, char** argv);

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0).
int find_free_port();

}  // namespace dgcn
