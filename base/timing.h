// Wall-clock seconds for progress lines, epoch reports and benchmarks: the
// steady clock, so a clock adjustment never makes a negative duration.
//
//   const auto t = Clock::now();
//   ...
//   report.compute_s += seconds_since(t);
//
// And what the whole process has used (every thread): CPU seconds, the
// kernel's share of them and minor page faults. A shared VM's stolen time
// does not count as CPU time, and a fresh page's cost shows as system time
// and a fault: what a piece of work cost rather than how long it waited.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdint>

namespace dgcn {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct ProcessUsage {
  double cpu_s = 0;          // user and system
  double system_s = 0;       // ... of which in the kernel
  int64_t minor_faults = 0;  // pages mapped without reading a disk
};

// The usage of every thread of this process so far (getrusage, as Python's
// resource.getrusage(RUSAGE_SELF)).
inline ProcessUsage process_usage() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return {seconds(r.ru_utime) + seconds(r.ru_stime), seconds(r.ru_stime), static_cast<int64_t>(r.ru_minflt)};
}

// `now` less `before`: what happened in between.
inline ProcessUsage operator-(const ProcessUsage& now, const ProcessUsage& before) {
  return {now.cpu_s - before.cpu_s, now.system_s - before.system_s, now.minor_faults - before.minor_faults};
}

}  // namespace dgcn
