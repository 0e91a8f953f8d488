// Wall-clock seconds for progress lines, epoch reports and benchmarks: the
// steady clock, so a clock adjustment never makes a negative duration.
//
//   const auto t = Clock::now();
//   ...
//   report.compute_s += seconds_since(t);
//
// And the CPU seconds the whole process has run (every thread, the kernel's
// share included), which a shared VM's stolen time does not inflate: what
// a piece of work cost rather than how long it waited for a CPU.
#pragma once

#include <time.h>

#include <chrono>

namespace dgcn {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds of every thread of this process so far (user and system;
// CLOCK_PROCESS_CPUTIME_ID, as Python's time.process_time()).
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace dgcn
