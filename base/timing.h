// Wall-clock seconds for progress lines, epoch reports and benchmarks: the
// steady clock, so a clock adjustment never makes a negative duration.
//
//   const auto t = Clock::now();
//   ...
//   report.compute_s += seconds_since(t);
#pragma once

#include <chrono>

namespace dgcn {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace dgcn
