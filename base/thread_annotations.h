// Lock annotations that clang's -Wthread-safety checks at compile time (no-ops
// for other compilers), after LevelDB's port/thread_annotations.h:
//
//   Mutex mutex_;
//   int pending_ GUARDED_BY(mutex_) = 0;
//   void drain_locked() EXCLUSIVE_LOCKS_REQUIRED(mutex_);
//
// Use them with base/mutex.h's Mutex, MutexLock and CondVar; std::mutex
// carries no annotations, so clang cannot see it being held.
#pragma once

#if defined(__clang__)
#define DGCN_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define DGCN_THREAD_ANNOTATION(x)
#endif

#define GUARDED_BY(x) DGCN_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) DGCN_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_AFTER(...) DGCN_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) DGCN_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define EXCLUSIVE_LOCKS_REQUIRED(...) DGCN_THREAD_ANNOTATION(exclusive_locks_required(__VA_ARGS__))
#define LOCKS_EXCLUDED(...) DGCN_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define LOCKABLE DGCN_THREAD_ANNOTATION(lockable)
#define SCOPED_LOCKABLE DGCN_THREAD_ANNOTATION(scoped_lockable)
#define EXCLUSIVE_LOCK_FUNCTION(...) DGCN_THREAD_ANNOTATION(exclusive_lock_function(__VA_ARGS__))
#define UNLOCK_FUNCTION(...) DGCN_THREAD_ANNOTATION(unlock_function(__VA_ARGS__))
#define ASSERT_EXCLUSIVE_LOCK(...) DGCN_THREAD_ANNOTATION(assert_exclusive_lock(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS DGCN_THREAD_ANNOTATION(no_thread_safety_analysis)
