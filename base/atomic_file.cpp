#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace dgcn {
namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// The live temporaries, for the signal handler: a fixed table it can read
// without locks or allocation (state 2 = a complete path is in `path`).
constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;
struct TempSlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 registered
  char path[kPathBytes];
};
TempSlot g_temps[kSlots];

int register_temp(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_temps[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_temps[i].path, path.c_str(), path.size() + 1);
      g_temps[i].state.store(2);
      return i;
    }
  }
  return -1;  // more than kSlots at once: this one is not cleaned up on a signal
}

void unregister_temp(int slot) {
  if (slot >= 0) g_temps[slot].state.store(0);
}

extern "C" void remove_temps_and_die(int sig) {
  for (TempSlot& t : g_temps) {
    if (t.state.load() == 2) ::unlink(t.path);  // async-signal-safe
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void remove_temporary_files_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = remove_temps_and_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, nullptr);
}

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  static std::atomic<uint64_t> counter{0};
  temp_ = fmt::format("{}.tmp-{}-{}", target_, ::getpid(), counter.fetch_add(1));
  int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  DGCN_CHECK(fd >= 0, "cannot write {}: creating the temporary file {} failed: {}", target_, temp_,
             errno_text(errno));
  fd_ = UniqueFd(fd);
  slot_ = register_temp(temp_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    fd_.reset();
    ::unlink(temp_.c_str());
  }
  unregister_temp(slot_);
}

void AtomicFile::commit() {
  DGCN_CHECK(::fsync(fd_.get()) == 0, "cannot write {}: fsync of {} failed: {}", target_, temp_,
             errno_text(errno));
  int fd = fd_.release();
  DGCN_CHECK(::close(fd) == 0, "cannot write {}: close of {} failed: {}", target_, temp_, errno_text(errno));
  DGCN_CHECK(::rename(temp_.c_str(), target_.c_str()) == 0, "cannot write {}: rename from {} failed: {}",
             target_, temp_, errno_text(errno));
  committed_ = true;
  unregister_temp(slot_);  // the temporary's name is gone now
  slot_ = -1;
  // Make the rename itself durable. A failure here leaves a complete file in
  // place, so it is not worth failing the whole write for.
  std::string dir = std::filesystem::path(target_).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void AtomicFile::write(const void* data, size_t size) {
  pwrite_all(fd_.get(), data, size, written_, temp_);
  written_ += size;
}

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
  AtomicFile out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

void write_file_atomically(const std::string& path, std::string_view text) {
  write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

}  // namespace dgcn
