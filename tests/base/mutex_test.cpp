#include "base/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace dgcn {
namespace {

// A bounded counter handed between threads: the guarded state is only read
// and written under the lock, waits loop on their condition.
class Handoff {
 public:
  void put(int v) {
    MutexLock lock(&mutex_);
    while (full_) changed_.wait();
    value_ = v;
    full_ = true;
    changed_.signal_all();
  }
  int take() {
    MutexLock lock(&mutex_);
    while (!full_) changed_.wait();
    full_ = false;
    changed_.signal_all();
    return value_;
  }
  bool take_for(std::chrono::milliseconds timeout, int* v) {
    MutexLock lock(&mutex_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!full_) {
      if (!changed_.wait_for(deadline - std::chrono::steady_clock::now()) &&
          std::chrono::steady_clock::now() >= deadline)
        return false;
    }
    full_ = false;
    changed_.signal_all();
    *v = value_;
    return true;
  }

 private:
  Mutex mutex_;
  CondVar changed_{&mutex_};
  bool full_ GUARDED_BY(mutex_) = false;
  int value_ GUARDED_BY(mutex_) = 0;
};

TEST(Mutex, CondVarHandsValuesAcrossThreadsInOrder) {
  Handoff h;
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) h.put(i);
  });
  std::vector<int> got;
  for (int i = 0; i < 1000; ++i) got.push_back(h.take());
  producer.join();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], i);
}

TEST(Mutex, TimedWaitGivesUpWhenNothingArrives) {
  Handoff h;
  int v = -1;
  EXPECT_FALSE(h.take_for(std::chrono::milliseconds(20), &v));
  h.put(7);
  EXPECT_TRUE(h.take_for(std::chrono::milliseconds(20), &v));
  EXPECT_EQ(v, 7);
}

}  // namespace
}  // namespace dgcn
