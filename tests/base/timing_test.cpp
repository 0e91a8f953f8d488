#include "base/timing.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

namespace dgcn {
namespace {

// Busy work on the calling thread until `seconds` of its own CPU time
// have passed (not wall time: a loaded machine may deschedule it).
void spin_cpu(double seconds) {
  const auto thread_cpu = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const double start = thread_cpu();
  std::atomic<uint64_t> sink{0};
  while (thread_cpu() - start < seconds) {
    for (int i = 0; i < 100000; ++i) sink.fetch_add(1, std::memory_order_relaxed);
  }
}

// process_usage counts the work of every thread of the process and not the
// time spent waiting, and fresh pages as faults: what
// bench/python_epoch_bench.py compares between two programs' epochs.
TEST(ProcessUsage, CountsEveryThreadsWorkAndNotSleep) {
  ProcessUsage before = process_usage();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT((process_usage() - before).cpu_s, 0.1) << "sleeping is not CPU time";

  before = process_usage();
  std::thread other([] { spin_cpu(0.15); });
  spin_cpu(0.15);
  other.join();
  const ProcessUsage used = process_usage() - before;
  EXPECT_GE(used.cpu_s, 0.3) << "both threads' work counts";
  EXPECT_GE(used.system_s, 0);
  EXPECT_LE(used.system_s, used.cpu_s);
}

TEST(ProcessUsage, CountsAFaultForEveryFreshPageTouched) {
  constexpr size_t kPages = 256;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  madvise(p, kPages * page, MADV_NOHUGEPAGE);  // one fault a 4 KiB page
  const ProcessUsage before = process_usage();
  for (size_t i = 0; i < kPages; ++i) static_cast<volatile char*>(p)[i * page] = 1;
  const ProcessUsage used = process_usage() - before;
  munmap(p, kPages * page);
  EXPECT_GE(used.minor_faults, static_cast<int64_t>(kPages));
}

}  // namespace
}  // namespace dgcn
