// Checkpoint files written off the training thread (Note [Asynchronous
// checkpoints]): the training loop encodes a checkpoint into bytes (a copy
// of the weights and optimizer state, milliseconds for our models) and goes
// on; one writer thread writes each file atomically (base/atomic_file.h:
// temporary name, fsync, rename, fsync of the folder) and then prunes the
// folder, in the order the checkpoints were handed over.
//
// Note [Asynchronous checkpoints]
// Owner: the epoch driver, on the rank that writes (rank 0). Bound: one
// checkpoint being written and none waiting: save() first waits for the
// previous write to end, so at most two encoded checkpoints exist at once
// and a slow disk slows training instead of filling memory. A write error is
// kept and rethrown by the next save() or by flush(), naming the file; the
// destructor waits for the write in progress and drops its error (it runs
// while an exception unwinds), so the newest complete checkpoint is on disk
// whatever ends the run, except SIGKILL: then the newest file may be missing,
// never half-written, and the previous one is still there.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "train/checkpoint.h"

namespace dgcn {

class CheckpointWriter {
 public:
  explicit CheckpointWriter(std::string dir);
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Hands over an encoded checkpoint (encode_checkpoint) for `state`; with
  // `best`, also written as best.pt. Waits for the previous write first.
  void save(const CheckpointState& state, std::vector<char> bytes, bool best);
  // Waits until every handed-over checkpoint is on disk; rethrows a write error.
  void flush();

  // Seconds save() and flush() spent waiting for a write (the part of
  // checkpointing that training saw).
  double waited_seconds() const;

 private:
  struct Job {
    CheckpointState state;
    std::vector<char> bytes;
    bool best = false;
  };
  void run();
  void wait_idle_locked() EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const std::string dir_;
  mutable Mutex mutex_;
  CondVar changed_{&mutex_};
  bool has_job_ GUARDED_BY(mutex_) = false;  // a job waits or is being written
  Job job_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  std::exception_ptr error_ GUARDED_BY(mutex_);
  double waited_s_ GUARDED_BY(mutex_) = 0;
  std::thread thread_;  // started last, joined first
};

}  // namespace dgcn
