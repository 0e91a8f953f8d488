// Runs tests/distributed/dist_worker.cpp as N ranks through dgcn's launcher
// (localhost, Gloo) and collects what each rank wrote.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/timing.h"
#include "distributed/launcher.h"
#include "run_command.h"

namespace dgcn::testing {

struct WorkerRun {
  LaunchResult launch;
  std::vector<nlohmann::json> ranks;  // rank r's JSON, or null when it wrote none
  double seconds = 0;
};

// Seconds a test allows, beyond the timeouts it sets, for the ranks to start
// (LibTorch's static initialisation, the rendezvous) and be torn down: 10 in
// a plain build; a sanitizer build starts each process several times slower
// (measured under ASan: 16.4 s where a plain build takes ~5), so 3x there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr double kStartSlackSeconds = 30.0;
#else
inline constexpr double kStartSlackSeconds = 10.0;
#endif

inline LaunchOptions with_timeout(double seconds) {
  LaunchOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  return options;
}

// `args`: the scenario and its flags; --out and --timeout (options.timeout) are added.
inline WorkerRun run_worker(int nproc, std::vector<std::string> args, const ScratchDir& out,
                            LaunchOptions options = with_timeout(20)) {
  options.nproc_per_node = nproc;
  std::vector<std::string> argv = {DGCN_DIST_WORKER, "--out", out.path(), "--timeout",
                                   std::to_string(options.timeout.count() / 1000.0)};
  argv.insert(argv.end(), args.begin(), args.end());
  auto start = std::chrono::steady_clock::now();
  WorkerRun run;
  run.launch = run_local_ranks(options, argv);
  run.seconds = seconds_since(start);
  for (int r = 0; r < nproc; ++r) {
    std::string path = out.file("rank" + std::to_string(r) + ".json");
    run.ranks.push_back(std::filesystem::exists(path) ? nlohmann::json::parse(std::ifstream(path))
                                                      : nlohmann::json());
  }
  return run;
}

}  // namespace dgcn::testing
