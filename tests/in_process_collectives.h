// Collectives (partition/collectives.h) between threads of one process:
// ranks as threads, for tests of the partitioned sampler, the owner round
// trip, inference and the replica check without processes or sockets.
//
//   InProcessGroup group(3);
//   run_ranks(3, [&](int rank) { PartitionedSampler s(part[rank], map[rank], group.at(rank), o); ... });
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/error.h"
#include "partition/collectives.h"

namespace dgcn::testing {

class InProcessGroup {
 public:
  explicit InProcessGroup(int size) : size_(size), sends_(static_cast<size_t>(size), nullptr) {
    for (int r = 0; r < size; ++r) endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
  }
  Collectives& at(int rank) { return *endpoints_[static_cast<size_t>(rank)]; }
  int64_t exchanges() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return exchanges_;
  }

 private:
  struct Endpoint final : Collectives {
    Endpoint(InProcessGroup& g, int r) : group(g), r_(r) {}
    int rank() const override { return r_; }
    int size() const override { return group.size_; }
    void exchange(const Messages& send, Messages& received) override { group.exchange(r_, send, received); }
    // Rank by rank through an exchange: the sum is the same on every rank.
    std::vector<double> sum(std::vector<double> values) override {
      std::vector<double> out(values.size(), 0.0);
      for (const std::vector<double>& theirs : all_gather(*this, values)) {
        DGCN_CHECK(theirs.size() == values.size(), "in-process sum: {} values here, {} on a peer",
                   values.size(), theirs.size());
        for (size_t i = 0; i < out.size(); ++i) out[i] += theirs[i];
      }
      return out;
    }
    void barrier() override {
      Messages send, received;
      for (int q = 0; q < group.size_; ++q) send.end_message();
      exchange(send, received);
    }
    InProcessGroup& group;
    int r_;
  };

  // All ranks deposit their messages, each copies its column, and none
  // returns (and reuses its send buffer) before all have copied.
  void exchange(int rank, const Messages& send, Messages& received) {
    DGCN_CHECK(send.count() == size_, "in-process all-to-all: {} messages for {} ranks", send.count(), size_);
    std::unique_lock<std::mutex> lock(mutex_);
    sends_[static_cast<size_t>(rank)] = &send;
    barrier(lock);
    received.begin();
    for (int q = 0; q < size_; ++q) {
      received.append(sends_[static_cast<size_t>(q)]->of(rank));
      received.end_message();
    }
    if (rank == 0) ++exchanges_;
    barrier(lock);
  }
  void barrier(std::unique_lock<std::mutex>& lock) {
    const int64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    const bool done = cv_.wait_for(lock, std::chrono::seconds(60), [&] { return generation_ != generation; });
    DGCN_CHECK(done, "in-process all-to-all: a rank never reached the exchange (60 s)");
  }

  const int size_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<const Messages*> sends_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  int64_t exchanges_ = 0;
};

// Runs fn(rank) on `size` threads and rethrows the first exception.
inline void run_ranks(int size, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace dgcn::testing
