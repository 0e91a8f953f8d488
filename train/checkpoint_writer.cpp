// See Note [Asynchronous checkpoints] in checkpoint_writer.h.
#include "train/checkpoint_writer.h"
#include "base/atomic_file.h"
#include "base/timing.h"

#include <chrono>
#include <utility>

namespace dgcn {

CheckpointWriter::CheckpointWriter(std::string dir) : dir_(std::move(dir)) {
  thread_ = std::thread([this] { run(); });
}

CheckpointWriter::~CheckpointWriter() {
  {
    MutexLock lock(&mutex_);
    wait_idle_locked();
    stop_ = true;
  }
  changed_.signal_all();
  thread_.join();
}

void CheckpointWriter::wait_idle_locked() {
  if (!has_job_) return;
  const auto start = std::chrono::steady_clock::now();
  while (has_job_) changed_.wait();
  waited_s_ += seconds_since(start);
}

void CheckpointWriter::save(const CheckpointState& state, std::vector<char> bytes, bool best) {
  {
    MutexLock lock(&mutex_);
    wait_idle_locked();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    job_ = Job{state, std::move(bytes), best};
    has_job_ = true;
  }
  changed_.signal_all();
}

void CheckpointWriter::flush() {
  MutexLock lock(&mutex_);
  wait_idle_locked();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

double CheckpointWriter::waited_seconds() const {
  MutexLock lock(&mutex_);
  return waited_s_;
}

void CheckpointWriter::run() {
  // Explicit lock/unlock: the lock is dropped while a file is written.
  mutex_.lock();
  for (;;) {
    while (!has_job_ && !stop_) changed_.wait();
    if (!has_job_) break;  // stopped with nothing left
    Job job = std::move(job_);
    mutex_.unlock();
    std::exception_ptr error;
    try {
      set_interrupt_checkpoint(write_checkpoint(dir_, job.state, job.bytes, job.best));
    } catch (...) {
      error = std::current_exception();
    }
    job = Job{};  // the bytes go before the next checkpoint is encoded
    mutex_.lock();
    if (error && !error_) error_ = error;
    has_job_ = false;
    changed_.signal_all();
  }
  mutex_.unlock();
}

}  // namespace dgcn
