#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <unordered_map>

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
// The same for AtomicFolder's temporary folders (few live at once).
constexpr int kFolderSlots = 8;
TempSlot g_folders[kFolderSlots];

int register_path(TempSlot* slots, int count, const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < count; ++i) {
    int expected = 0;
    if (slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
      slots[i].state.store(2);
      return i;
    }
  }
  return -1;  // more than `count` at once: this one is not cleaned up on a signal
}

int register_temp(const std::string& path) {
  return register_path(g_temps, kSlots, path);
}

void unregister_temp(int slot) {
  if (slot >= 0) g_temps[slot].state.store(0);
}

int register_folder(const std::string& path) {
  return register_path(g_folders, kFolderSlots, path);
}

void unregister_folder(int slot) {
  if (slot >= 0) g_folders[slot].state.store(0);
}

// Removes the folder `path` and the files in it with async-signal-safe calls
// only (raw getdents64, unlinkat, rmdir: no opendir, which allocates). Another
// thread may still be adding a file while this runs, so a folder that is not
// empty yet is swept again a few times.
void remove_folder_in_handler(const char* path) {
  struct Dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  for (int pass = 0; pass < 4; ++pass) {
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;  // never made, or already renamed onto its target
    alignas(8) char buf[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof(buf));
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* d = reinterpret_cast<const Dirent64*>(buf + at);
        const bool dots =
            d->name[0] == '.' && (d->name[1] == '\0' || (d->name[1] == '.' && d->name[2] == '\0'));
        if (!dots) ::unlinkat(fd, d->name, 0);
        at += d->reclen;
      }
    }
    ::close(fd);
    if (::rmdir(path) == 0) return;
  }
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
  // A second signal in another thread while the first is handled: the first
  // ends the process; this one only must not print the note twice.
  static std::atomic<bool> handling{false};
  if (handling.exchange(true)) {
    for (;;) ::pause();
  }
  for (TempSlot& t : g_temps) {
    if (t.state.load() == 2) ::unlink(t.path);  // async-signal-safe
  }
  for (TempSlot& f : g_folders) {
    if (f.state.load() == 2) remove_folder_in_handler(f.path);
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

// Makes the entries of folder `dir` durable. Best effort: a failure leaves
// complete files in place, so it is not worth failing the whole write for.
void sync_folder(const std::string& dir) {
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

// Makes a rename into `path`'s folder durable.
void sync_parent_folder(const std::string& path) {
  sync_folder(std::filesystem::path(path).parent_path().string());
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
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, nullptr);
}

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  static std::atomic<uint64_t> counter{0};
  temp_ = fmt::format("{}.tmp-{}-{}", target_, ::getpid(), counter.fetch_add(1));
  // Listed before it exists, so no moment has a temporary the handler misses.
  slot_ = register_temp(temp_);
  int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    unregister_temp(slot_);
    DGCN_CHECK(false, "cannot write {}: creating the temporary file {} failed: {}", target_, temp_,
               errno_text(err));
  }
  fd_ = UniqueFd(fd);
  test_pause_point("atomic-file-created");
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    fd_.reset();
    ::unlink(temp_.c_str());
  }
  unregister_temp(slot_);
}

void AtomicFile::commit() {
  test_pause_point("atomic-file-commit");
  DGCN_CHECK(::fsync(fd_.get()) == 0, "cannot write {}: fsync of {} failed: {}", target_, temp_,
             errno_text(errno));
  int fd = fd_.release();
  DGCN_CHECK(::close(fd) == 0, "cannot write {}: close of {} failed: {}", target_, temp_, errno_text(errno));
  DGCN_CHECK(::rename(temp_.c_str(), target_.c_str()) == 0, "cannot write {}: rename from {} failed: {}",
             target_, temp_, errno_text(errno));
  committed_ = true;
  unregister_temp(slot_);  // the temporary's name is gone now
  slot_ = -1;
  sync_parent_folder(target_);
  test_pause_point("atomic-file-committed");
}

void AtomicFile::write(const void* data, size_t size) {
  pwrite_all(fd_.get(), data, size, written_, temp_);
  written_ += size;
}

AtomicFolder::AtomicFolder(std::string target) : target_(std::move(target)) {
  static std::atomic<uint64_t> counter{0};
  while (target_.size() > 1 && target_.back() == '/') target_.pop_back();  // "p/" + ".tmp" is inside p
  temp_ = fmt::format("{}.tmp-{}-{}", target_, ::getpid(), counter.fetch_add(1));
  slot_ = register_folder(temp_);  // before it exists, as AtomicFile does
  if (::mkdir(temp_.c_str(), 0777) != 0) {
    const int err = errno;
    unregister_folder(slot_);
    DGCN_CHECK(false, "cannot write {}: creating the temporary folder {} failed: {}", target_, temp_,
               errno_text(err));
  }
  test_pause_point("atomic-folder-created");
}

AtomicFolder::~AtomicFolder() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove_all(temp_, ec);
  }
  unregister_folder(slot_);
}

void AtomicFolder::commit() {
  test_pause_point("atomic-folder-commit");
  sync_folder(temp_);  // the entries of the files in it are durable before the name is
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    DGCN_CHECK(err != ENOTEMPTY && err != EEXIST, "cannot write {}: it is a folder that is not empty",
               target_);
    DGCN_CHECK(err != ENOTDIR, "cannot write {}: it exists and is not a folder", target_);
    DGCN_CHECK(false, "cannot write {}: rename from {} failed: {}", target_, temp_, errno_text(err));
  }
  committed_ = true;
  unregister_folder(slot_);
  slot_ = -1;
  sync_parent_folder(target_);
}

void test_pause_point(const char* point) {
  static const char* const spec = std::getenv("DGCN_TEST_PAUSE_AT");
  if (spec == nullptr || *spec == '\0') return;
  const std::string_view s(spec);
  const size_t colon = s.find(':');
  const std::string_view name = s.substr(0, colon);
  const int nth = colon == std::string_view::npos ? 1 : std::atoi(spec + colon + 1);
  if (name != point) return;
  static std::mutex m;
  static std::unordered_map<std::string, int> seen;
  int count = 0;
  {
    std::lock_guard<std::mutex> lock(m);
    count = ++seen[point];
  }
  if (count != nth) return;
  std::fprintf(stderr, "dgcn-test-paused-at %s\n", spec);
  std::fflush(stderr);
  for (;;) ::pause();  // until the test's signal ends the process
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
