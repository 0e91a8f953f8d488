#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

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

// The interrupt note's parts; the checkpoint part is double-buffered so a
// writer thread can replace it while the handler may be reading the other.
struct NoteText {
  char text[kPathBytes] = {};
};
NoteText g_note_before, g_note_none, g_note_after, g_note_paths[2];
std::atomic<int> g_note_state{0};        // 0 unset, 1 set
std::atomic<int> g_note_checkpoint{-1};  // which g_note_paths holds the newest; -1 none

void copy_text(NoteText& to, const std::string& from) {
  const size_t n = std::min(from.size(), kPathBytes - 1);
  std::memcpy(to.text, from.data(), n);
  to.text[n] = '\0';
}

void write_text(const char* text) {
  for (size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

extern "C" void remove_temps_and_die(int sig) {
  for (TempSlot& t : g_temps) {
    if (t.state.load() == 2) ::unlink(t.path);  // async-signal-safe
  }
  if (g_note_state.load() == 1) {
    const int c = g_note_checkpoint.load();
    write_text(g_note_before.text);
    write_text(c >= 0 ? g_note_paths[c].text : g_note_none.text);
    write_text(g_note_after.text);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void set_interrupt_note(const std::string& before, const std::string& none, const std::string& after) {
  g_note_state.store(0);
  copy_text(g_note_before, before);
  copy_text(g_note_none, none);
  copy_text(g_note_after, after);
  g_note_state.store(1);
}

void set_interrupt_checkpoint(const std::string& path) {
  static std::mutex writers;  // one writer at a time; the handler reads without it
  std::lock_guard<std::mutex> lock(writers);
  const int next = g_note_checkpoint.load() == 0 ? 1 : 0;
  copy_text(g_note_paths[next], path);
  g_note_checkpoint.store(next);
}

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
