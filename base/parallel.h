// Fork-join parallel loops for coarse work (parsing, building, (de)compressing).
// Threads are created and joined inside each call, so nothing outlives it; the
// first exception thrown by any thread is rethrown to the caller after all
// threads have joined. Results must never depend on the thread count: split
// work by index ranges, not by which thread got there first.
//
// Work on the per-batch path (a few milliseconds, every batch) must not pay
// for thread creation: torch-free kernels there take a ChunkLoop, and the
// tensor bridge passes one over LibTorch's persistent intra-op pool
// (models/batch_tensors.h), the pool the rest of the batch runs on.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dgcn {

// DGCN_NUM_THREADS if set (>= 1), else the hardware concurrency.
int default_num_threads();

// The one rule for how many threads a process uses: `requested` when > 0;
// else DGCN_NUM_THREADS when set; else this machine's cores shared by the
// `processes_per_machine` processes of a job running on it (the ranks of one
// node; 1 for a single process, which then gets every core).
int resolve_threads(int requested, int processes_per_machine = 1);

// Calls fn(begin, end, thread_index) on `num_threads` contiguous, near-equal
// ranges covering [0, n). With one thread (or n small) runs inline.
template <class F>
void parallel_for(int64_t n, int num_threads, F&& fn) {
  if (n <= 0) return;
  int64_t threads = std::max<int64_t>(1, std::min<int64_t>(num_threads, n));
  if (threads == 1) {
    fn(int64_t{0}, n, 0);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      int64_t begin = n * t / threads;
      int64_t end = n * (t + 1) / threads;
      try {
        fn(begin, end, static_cast<int>(t));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// Calls fn(begin, end) for chunks of `chunk` indices of [0, n), handed out
// dynamically to `num_threads` threads (for uneven work such as rows of a
// power-law graph). Chunk boundaries are fixed, so per-chunk results are the
// same whatever the thread count.
template <class F>
void parallel_for_chunks(int64_t n, int64_t chunk, int num_threads, F&& fn) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(1, chunk);
  int64_t num_chunks = (n + chunk - 1) / chunk;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  parallel_for(std::min<int64_t>(num_threads, num_chunks), num_threads, [&](int64_t, int64_t, int) {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= num_chunks) return;
      try {
        fn(c * chunk, std::min(n, (c + 1) * chunk));
      } catch (...) {
        failed = true;
        throw;
      }
    }
  });
}

// A parallel loop over fixed chunks on some thread pool: calls
// fn(c * chunk, min(n, (c + 1) * chunk)) once for every chunk c of [0, n), in
// any order and on any thread, and returns when all are done (rethrowing the
// first exception). Chunk boundaries are fixed, so per-chunk results never
// depend on the pool.
using ChunkLoop =
    std::function<void(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn)>;

// parallel_for_chunks on `num_threads` threads created per call (coarse work, tests).
ChunkLoop fork_join_chunks(int num_threads);

}  // namespace dgcn
