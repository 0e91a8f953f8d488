#include "base/timing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace dgcn {
namespace {

// Busy work on the calling thread until `seconds` of its own CPU time
// have passed (not wall time: a loaded machine may deschedule it).
void spin_cpu(double seconds) {
  timespec start{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  std::atomic<uint64_t> sink{0};
  for (;;) {
    for (int i = 0; i < 100000; ++i) sink.fetch_add(1, std::memory_order_relaxed);
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if ((now.tv_sec - start.tv_sec) + 1e-9 * (now.tv_nsec - start.tv_nsec) >= seconds) return;
  }
}

// process_cpu_seconds counts the work of every thread of the process, and
// not the time spent waiting: what bench/python_epoch_bench.py compares
// between the two programs as each epoch's cost.
TEST(ProcessCpuSeconds, CountsEveryThreadsWorkAndNotSleep) {
  double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(process_cpu_seconds() - before, 0.1) << "sleeping is not CPU time";

  before = process_cpu_seconds();
  std::thread other([] { spin_cpu(0.15); });
  spin_cpu(0.15);
  other.join();
  EXPECT_GE(process_cpu_seconds() - before, 0.3) << "both threads' work counts";
}

}  // namespace
}  // namespace dgcn
