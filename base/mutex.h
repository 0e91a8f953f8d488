// A mutex, its scoped lock and a condition variable that clang's
// -Wthread-safety can follow (base/thread_annotations.h), after LevelDB's
// port::Mutex / port::CondVar. Thin wrappers over the standard types.
//
//   Mutex mutex_;
//   CondVar ready_{&mutex_};
//   bool done_ GUARDED_BY(mutex_) = false;
//   ...
//   MutexLock lock(&mutex_);
//   while (!done_) ready_.wait();   // the condition is read with the lock held
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace dgcn {

class LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() UNLOCK_FUNCTION() { mu_.unlock(); }
  // Tells the analysis the caller holds the lock (where it cannot see it).
  void assert_held() ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for the scope.
class SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->lock(); }
  ~MutexLock() UNLOCK_FUNCTION() { mu_->unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Waits release and re-acquire the mutex given at construction, which the
// caller must hold (not annotated: the analysis cannot tell that mutex from
// the caller's, as in LevelDB's port::CondVar). No predicate overloads: the
// caller loops on its condition, so the analysis sees every guarded read
// under the lock.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void wait() {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Returns false when `timeout` passed without a signal (spurious wake-ups
  // return true: callers loop on their condition, as with wait()).
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    const bool signalled = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void signal() { cv_.notify_one(); }
  void signal_all() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

}  // namespace dgcn
