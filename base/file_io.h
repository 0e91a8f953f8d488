// POSIX file plumbing: an owned descriptor, whole-range pread/pwrite, a
// read-only mapping and an exclusive lock. Files written whole go through
// base/atomic_file.h. Every error is a dgcn::Error naming the file, the
// operation and errno's text.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dgcn {

// An open file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Opens `path` read-only; throws naming `path` when it cannot.
UniqueFd open_read(const std::string& path);

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t device = 0, inode = 0;  // which file this is, whatever its name now
};
FileStat stat_fd(int fd, const std::string& path);

// Reads exactly `size` bytes at `offset`; a short file is an error that says
// how many bytes were there ("truncated?").
void pread_all(int fd, void* data, size_t size, uint64_t offset, const std::string& path);
// Writes exactly `size` bytes at `offset` (retries short writes and EINTR).
void pwrite_all(int fd, const void* data, size_t size, uint64_t offset, const std::string& path);

// A read-only, shared mapping of a whole file. Pages come from the page
// cache, so every process mapping the same file shares them.
class MappedFile {
 public:
  MappedFile(int fd, uint64_t size, const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::byte* data() const { return static_cast<const std::byte*>(map_); }
  uint64_t size() const { return size_; }

 private:
  void* map_ = nullptr;  // as mmap returned it, for munmap; read through data() only (PROT_READ)
  uint64_t size_ = 0;
};

// An exclusive flock(2) on "<path>", created if missing, held until
// destruction. Blocks while another process holds it. The lock file is left
// in place on purpose: removing it would let two processes lock two
// different inodes of the same name.
class FileLock {
 public:
  explicit FileLock(const std::string& path);

 private:
  UniqueFd fd_;
};

}  // namespace dgcn
