#include "distributed/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "base/error.h"
#include "base/error_report.h"
#include "distributed/rank_env.h"

extern char** environ;

namespace dgcn {
namespace {

using Clock = std::chrono::steady_clock;

// Variables the launcher owns: inherited values are replaced, never mixed.
constexpr std::array<const char*, 10> kRankVariables = {"RANK",
                                                        "WORLD_SIZE",
                                                        "LOCAL_RANK",
                                                        "LOCAL_WORLD_SIZE",
                                                        "MASTER_ADDR",
                                                        "MASTER_PORT",
                                                        "GROUP_RANK",
                                                        "TORCHELASTIC_USE_AGENT_STORE",
                                                        "TORCHELASTIC_RESTART_COUNT",
                                                        kErrorSocketVariable};

// The write end of the self-pipe that SIGINT/SIGTERM/SIGHUP handlers write
// the signal number into (one launcher at a time per process).
int g_signal_pipe_write = -1;

void on_signal(int signo) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signo);
  if (g_signal_pipe_write >= 0) [[maybe_unused]]
    auto n = write(g_signal_pipe_write, &byte, 1);
  errno = saved;
}

constexpr std::array<int, 3> kForwardedSignals = {SIGINT, SIGTERM, SIGHUP};

// Installs the handlers for the launcher's lifetime and restores the old ones.
class SignalPipe {
 public:
  SignalPipe() {
    DGCN_CHECK(pipe2(fds_, O_CLOEXEC | O_NONBLOCK) == 0, "launcher: pipe2 failed: {}", std::strerror(errno));
    g_signal_pipe_write = fds_[1];
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kForwardedSignals.size(); ++i) sigaction(kForwardedSignals[i], &action, &old_[i]);
  }
  ~SignalPipe() {
    for (size_t i = 0; i < kForwardedSignals.size(); ++i) sigaction(kForwardedSignals[i], &old_[i], nullptr);
    g_signal_pipe_write = -1;
    close(fds_[0]);
    close(fds_[1]);
  }
  int read_fd() const { return fds_[0]; }
  // The last signal received since the previous call, or 0.
  int drain() {
    unsigned char byte = 0;
    int last = 0;
    while (read(fds_[0], &byte, 1) == 1) last = byte;
    return last;
  }

 private:
  int fds_[2] = {-1, -1};
  std::array<struct sigaction, kForwardedSignals.size()> old_{};
};

// The ranks' error lines of one start (Note [One error per job] in
// base/error_report.h): a datagram socket pair, one end inherited by every
// rank, the other read here; each distinct line is kept once, in order.
class ErrorInbox {
 public:
  ErrorInbox() {
    DGCN_CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds_) == 0,
               "launcher: socketpair failed: {}", std::strerror(errno));
    DGCN_CHECK(fcntl(fds_[0], F_SETFL, O_NONBLOCK) == 0, "launcher: fcntl failed: {}", std::strerror(errno));
  }
  ~ErrorInbox() {
    close(fds_[0]);
    close(fds_[1]);
  }
  ErrorInbox(const ErrorInbox&) = delete;
  ErrorInbox& operator=(const ErrorInbox&) = delete;

  int read_fd() const { return fds_[0]; }
  int rank_fd() const { return fds_[1]; }
  // Reads every waiting line (the ranks send without blocking: a full
  // queue sends them to stderr instead, so this is also called as they come).
  void drain() {
    std::string buffer(64 * 1024, '\0');
    for (;;) {
      const ssize_t n = recv(fds_[0], buffer.data(), buffer.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      std::string line(buffer.data(), static_cast<size_t>(n));
      if (std::find(lines_.begin(), lines_.end(), line) == lines_.end()) lines_.push_back(std::move(line));
    }
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  int fds_[2] = {-1, -1};
  std::vector<std::string> lines_;
};

struct Child {
  int rank = 0;
  pid_t pid = -1;
  int pidfd = -1;  // -1 when pidfd_open is unavailable: fall back to timed waits
  bool running = true;
  int status = 0;  // waitpid status once exited
};

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  return fmt::format("ended with wait status {:#x}", status);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

bool failed(int status) {
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// The environment of one rank: ours, minus the rank variables, plus its own.
std::vector<std::string> rank_environment(const LaunchOptions& options, int local_rank, int world_size,
                                          int attempt) {
  std::vector<std::string> env;
  bool has_omp = false;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    if (std::find(kRankVariables.begin(), kRankVariables.end(), name) != kRankVariables.end()) continue;
    has_omp = has_omp || name == "OMP_NUM_THREADS";
    env.emplace_back(entry);
  }
  int rank = options.node_rank * options.nproc_per_node + local_rank;
  env.push_back(fmt::format("RANK={}", rank));
  env.push_back(fmt::format("WORLD_SIZE={}", world_size));
  env.push_back(fmt::format("LOCAL_RANK={}", local_rank));
  env.push_back(fmt::format("LOCAL_WORLD_SIZE={}", options.nproc_per_node));
  env.push_back(fmt::format("GROUP_RANK={}", options.node_rank));
  env.push_back(fmt::format("MASTER_ADDR={}", options.master_addr));
  env.push_back(fmt::format("MASTER_PORT={}", options.master_port));
  // As torchrun says it: a restarted rank resumes from the newest checkpoint.
  env.push_back(fmt::format("TORCHELASTIC_RESTART_COUNT={}", attempt));
  if (!has_omp) {
    // Ranks of one node share its cores; torchrun sets 1, we split them.
    int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    env.push_back(fmt::format("OMP_NUM_THREADS={}", std::max(1, cores / options.nproc_per_node)));
  }
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

LaunchOptions resolved(LaunchOptions options) {
  DGCN_CHECK(options.nproc_per_node >= 1, "launcher: --nproc-per-node={} must be at least 1",
             options.nproc_per_node);
  DGCN_CHECK(options.nnodes >= 1, "launcher: --nnodes={} must be at least 1", options.nnodes);
  DGCN_CHECK(options.node_rank >= 0 && options.node_rank < options.nnodes,
             "launcher: --node-rank={} is outside [0, --nnodes={})", options.node_rank, options.nnodes);
  DGCN_CHECK(options.master_port >= 0 && options.master_port <= 65535,
             "launcher: --master-port={} is outside [0, 65535]", options.master_port);
  DGCN_CHECK(options.timeout.count() > 0, "launcher: --timeout must be positive (got {} ms)",
             options.timeout.count());
  DGCN_CHECK(options.max_restarts >= 0, "launcher: --max-restarts={} must not be negative",
             options.max_restarts);
  DGCN_CHECK(options.max_restarts == 0 || options.nnodes == 1,
             "launcher: --max-restarts with --nnodes={} needs every node to restart together; use torchrun "
             "--max_restarts for a multi-node job (dgcn-train resumes under it the same way)",
             options.nnodes);
  if (options.master_addr.empty()) {
    DGCN_CHECK(options.nnodes == 1,
               "launcher: --nnodes={} needs --master-addr (the address of node 0, reachable from every node)",
               options.nnodes);
    options.master_addr = "127.0.0.1";
  }
  if (options.master_port == 0) {
    options.master_port = options.nnodes == 1 ? find_free_port() : 29500;
  }
  options.stop_grace = std::min(options.stop_grace, options.timeout);
  return options;
}

pid_t start_rank(const std::string& program, std::vector<char*>& argv, std::vector<char*>& envp,
                 pid_t launcher, int inherited_fd) {
  // The forwarded signals stay blocked across fork: a child stopped right
  // after fork (a peer failed at once) must not run the launcher's handler,
  // which would write into the launcher's own signal pipe; the child resets
  // them to the default before unblocking.
  sigset_t forwarded, previous;
  sigemptyset(&forwarded);
  for (int s : kForwardedSignals) sigaddset(&forwarded, s);
  pthread_sigmask(SIG_BLOCK, &forwarded, &previous);
  pid_t pid = fork();
  if (pid != 0) pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  DGCN_CHECK(pid >= 0, "launcher: fork failed: {}", std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls until execve.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(125);  // the launcher died before prctl
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s : kForwardedSignals) sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    fcntl(inherited_fd, F_SETFD, 0);  // the error socket survives execve
    execve(program.c_str(), argv.data(), envp.data());
    const char msg[] = "dgcn launcher: execve failed for the rank program\n";
    [[maybe_unused]] auto n = write(2, msg, sizeof(msg) - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before we might signal it
  return pid;
}

void signal_all(std::vector<Child>& children, int signo) {
  for (auto& c : children) {
    if (c.running) kill(-c.pid, signo);
  }
}

}  // namespace

void add_launch_flags(CLI::App& app, LaunchOptions& options) {
  app.add_option("--nproc-per-node", options.nproc_per_node,
                 "Start this many ranks on this node and supervise them (built-in launcher). "
                 "Ignored when RANK is already set (torchrun, srun or mpirun wrapper)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--nnodes", options.nnodes, "Number of nodes in the job (each runs one launcher)")
      ->check(CLI::Range(1, 65536));
  app.add_option("--node-rank", options.node_rank, "This node's index in [0, --nnodes)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--master-addr", options.master_addr,
                 "Address of node 0, where rank 0 hosts the rendezvous store (127.0.0.1 on a single node)");
  app.add_option("--master-port", options.master_port,
                 "Port of the rendezvous store (0: a free port on one node, 29500 on several)")
      ->check(CLI::Range(0, 65535));
  app.add_option_function<double>(
         "--timeout",
         [&options](double seconds) {
           options.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
         },
         "Collective and rendezvous timeout in seconds: a rank stuck this long in a collective fails, and "
         "the launcher stops the others")
      ->default_str("60")
      ->check(CLI::Range(0.001, 1e6));
  app.add_option(
         "--max-restarts", options.max_restarts,
         "When a rank fails, stop every local rank and start them again, up to N times; they resume from "
         "the newest checkpoint (--checkpoint). One node only; under torchrun use its --max_restarts")
      ->check(CLI::Range(0, 1000));
}

int find_free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  DGCN_CHECK(fd >= 0, "find_free_port: socket failed: {}", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  int saved = errno;
  close(fd);
  DGCN_CHECK(ok, "find_free_port: bind to 127.0.0.1:0 failed: {}", std::strerror(saved));
  return ntohs(addr.sin_port);
}

namespace {

// One start of every local rank, supervised until all have exited.
LaunchResult run_attempt(const LaunchOptions& options, const std::vector<std::string>& argv, int attempt,
                         SignalPipe& signals, bool& interrupted) {
  int world_size = options.nnodes * options.nproc_per_node;
  spdlog::info("launcher: starting {} rank(s) of {} on node {}/{} (master {}:{}, timeout {} s{})",
               options.nproc_per_node, world_size, options.node_rank, options.nnodes, options.master_addr,
               options.master_port, options.timeout.count() / 1000.0,
               attempt > 0 ? fmt::format(", restart {} of {}", attempt, options.max_restarts) : "");
  if (options.node_rank == 0) {
    // docs/distributed.md, "What listens where": said once per start, since it is a port anyone may reach.
    spdlog::info(
        "launcher: rank 0 hosts the rendezvous store (c10d TCPStore) on port {} of every interface of "
        "this machine, not only {}: LibTorch's store cannot bind one address",
        options.master_port, options.master_addr);
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv = c_strings(args);
  std::vector<Child> children;
  pid_t self = getpid();
  LaunchResult result;
  ErrorInbox errors;
  try {
    for (int local = 0; local < options.nproc_per_node; ++local) {
      std::vector<std::string> env = rank_environment(options, local, world_size, attempt);
      env.push_back(fmt::format("{}={}", kErrorSocketVariable, errors.rank_fd()));
      std::vector<char*> c_env = c_strings(env);
      Child child;
      child.rank = options.node_rank * options.nproc_per_node + local;
      child.pid = start_rank(argv[0], c_argv, c_env, self, errors.rank_fd());
      child.pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
      children.push_back(child);
    }
  } catch (...) {
    signal_all(children, SIGKILL);
    for (auto& c : children) waitpid(c.pid, nullptr, 0);
    throw;
  }

  bool stopping = false;
  bool killed = false;
  int interrupted_by = 0;
  Clock::time_point kill_at{};
  auto begin_stop = [&] {
    if (stopping) return;
    stopping = true;
    signal_all(children, SIGTERM);
    kill_at = Clock::now() + options.stop_grace;
  };

  auto running = [&] {
    return std::count_if(children.begin(), children.end(), [](const Child& c) { return c.running; });
  };
  while (running() > 0) {
    std::vector<pollfd> fds;
    fds.push_back({signals.read_fd(), POLLIN, 0});
    fds.push_back({errors.read_fd(), POLLIN, 0});
    bool all_pidfds = true;
    for (auto& c : children) {
      if (!c.running) continue;
      if (c.pidfd >= 0) {
        fds.push_back({c.pidfd, POLLIN, 0});
      } else {
        all_pidfds = false;
      }
    }
    int timeout_ms = all_pidfds ? -1 : 100;
    if (stopping && !killed) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now()).count();
      left = std::max<int64_t>(left, 0);
      timeout_ms =
          timeout_ms < 0 ? static_cast<int>(left) : std::min<int>(timeout_ms, static_cast<int>(left));
    }
    int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      signal_all(children, SIGKILL);
      killed = true;
    }
    errors.drain();
    if (int signo = signals.drain(); signo != 0 && interrupted_by == 0) {
      interrupted_by = signo;
      spdlog::warn("launcher: received signal {} ({}); stopping the ranks", signo, strsignal(signo));
      begin_stop();
    }
    for (auto& c : children) {
      if (!c.running) continue;
      int status = 0;
      pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r != c.pid) continue;
      c.running = false;
      c.status = status;
      if (c.pidfd >= 0) close(c.pidfd);
      if (failed(status) && !result.failed_rank && interrupted_by == 0 && !stopping) {
        result.failed_rank = c.rank;
        result.exit_code = exit_code_of(status);
        result.message = fmt::format("rank {} (pid {}) {}", c.rank, c.pid, describe_status(status));
        begin_stop();
      }
    }
    if (stopping && !killed && Clock::now() >= kill_at && running() > 0) {
      spdlog::warn("launcher: {} rank(s) still running {} ms after SIGTERM; sending SIGKILL", running(),
                   options.stop_grace.count());
      signal_all(children, SIGKILL);
      killed = true;
    }
  }

  // Each distinct error once, before the launcher's own line about the ranks.
  errors.drain();
  result.rank_errors = errors.lines();
  for (const std::string& line : result.rank_errors) report_error_line(line);
  if (result.failed_rank) {
    int others = static_cast<int>(children.size()) - 1;
    result.message += others > 0 ? fmt::format("; stopped the other {} local rank(s)", others) : "";
  } else if (interrupted_by != 0) {
    result.exit_code = 128 + interrupted_by;
    result.message = fmt::format("launcher interrupted by signal {} ({}); ranks stopped", interrupted_by,
                                 strsignal(interrupted_by));
  }
  interrupted = interrupted_by != 0;
  return result;
}

}  // namespace

LaunchResult run_local_ranks(const LaunchOptions& raw_options, const std::vector<std::string>& argv) {
  DGCN_CHECK(!argv.empty(), "launcher: no program to run");
  LaunchOptions options = resolved(raw_options);
  SignalPipe signals;
  for (int attempt = 0;; ++attempt) {
    bool interrupted = false;
    LaunchResult result = run_attempt(options, argv, attempt, signals, interrupted);
    result.restarts = attempt;
    if (!result.failed_rank || interrupted || attempt >= options.max_restarts) {
      if (result.failed_rank && options.max_restarts > 0) {
        result.message +=
            fmt::format(" (after {} restart(s), --max-restarts={})", attempt, options.max_restarts);
      }
      return result;
    }
    spdlog::warn(
        "launcher: {}; restarting every local rank ({} of {} restarts); they resume from the newest "
        "checkpoint",
        result.message, attempt + 1, options.max_restarts);
    // A fresh store port: the failed attempt's may still be held by a rank
    // that was being stopped, and its keys belong to that attempt.
    if (raw_options.master_port == 0) options.master_port = find_free_port();
  }
}

std::optional<int> launch_if_requested(const LaunchOptions& options, int argc, char** argv) {
  if (started_as_rank()) {
    RankEnv env = rank_env_from_process();
    if (options.nproc_per_node > 1 && options.nproc_per_node != env.local_world_size) {
      spdlog::warn(
          "launcher: RANK is set (started by a launcher), so --nproc-per-node={} is ignored; "
          "LOCAL_WORLD_SIZE={}",
          options.nproc_per_node, env.local_world_size);
    }
    return std::nullopt;
  }
  if (!options.wanted()) return std::nullopt;
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  DGCN_CHECK(!ec, "launcher: cannot find this program's binary (/proc/self/exe): {}", ec.message());
  std::vector<std::string> args(argv, argv + argc);
  args[0] = self;
  LaunchResult result = run_local_ranks(options, args);
  if (!result.message.empty()) spdlog::error("launcher: {}", result.message);
  return result.exit_code;
}

}  // namespace dgcn
