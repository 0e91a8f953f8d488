#include "base/file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace dgcn {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// Large transfers are split so one syscall never asks for more than Linux
// moves at once (~2 GiB) and a short count is handled by the loop.
constexpr size_t kMaxIo = size_t{1} << 30;

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

UniqueFd open_read(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  DGCN_CHECK(fd >= 0, "cannot open {}: {}", path, errno_text(errno));
  return UniqueFd(fd);
}

FileStat stat_fd(int fd, const std::string& path) {
  struct stat st {};
  DGCN_CHECK(::fstat(fd, &st) == 0, "cannot stat {}: {}", path, errno_text(errno));
  DGCN_CHECK(S_ISREG(st.st_mode), "{} is not a regular file", path);
  FileStat out;
  out.size = static_cast<uint64_t>(st.st_size);
  out.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  out.device = static_cast<uint64_t>(st.st_dev);
  out.inode = static_cast<uint64_t>(st.st_ino);
  return out;
}

void pread_all(int fd, void* data, size_t size, uint64_t offset, const std::string& path) {
  auto* out = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out + done, std::min(size - done, kMaxIo), static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    DGCN_CHECK(n >= 0, "{}: read of {} bytes at offset {} failed: {}", path, size, offset, errno_text(errno));
    DGCN_CHECK(n > 0, "{}: unexpected end of file reading {} bytes at offset {} (only {} there; truncated?)",
               path, size, offset, done);
    done += static_cast<size_t>(n);
  }
}

void pwrite_all(int fd, const void* data, size_t size, uint64_t offset, const std::string& path) {
  const auto* in = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd, in + done, std::min(size - done, kMaxIo), static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    DGCN_CHECK(n > 0, "{}: write of {} bytes at offset {} failed: {}", path, size, offset,
               n < 0 ? errno_text(errno) : std::string("no progress"));
    done += static_cast<size_t>(n);
  }
}

MappedFile::MappedFile(int fd, uint64_t size, const std::string& path) : size_(size) {
  DGCN_CHECK(size > 0, "cannot map {}: the file is empty", path);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  DGCN_CHECK(p != MAP_FAILED, "cannot map {} ({} bytes): {}", path, size, errno_text(errno));
  map_ = p;
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

FileLock::FileLock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  DGCN_CHECK(fd >= 0, "cannot open lock file {}: {}", path, errno_text(errno));
  fd_ = UniqueFd(fd);
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  DGCN_CHECK(rc == 0, "cannot lock {}: {}", path, errno_text(errno));
}

}  // namespace dgcn
