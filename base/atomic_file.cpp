#include "base/atomic_file.h"

#include <fcntl.h>
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

}  // namespace

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  static std::atomic<uint64_t> counter{0};
  temp_ = fmt::format("{}.tmp-{}-{}", target_, ::getpid(), counter.fetch_add(1));
  int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  DGCN_CHECK(fd >= 0, "cannot write {}: creating the temporary file {} failed: {}", target_, temp_,
             errno_text(errno));
  fd_ = UniqueFd(fd);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    fd_.reset();
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::commit() {
  DGCN_CHECK(::fsync(fd_.get()) == 0, "cannot write {}: fsync of {} failed: {}", target_, temp_,
             errno_text(errno));
  int fd = fd_.release();
  DGCN_CHECK(::close(fd) == 0, "cannot write {}: close of {} failed: {}", target_, temp_, errno_text(errno));
  DGCN_CHECK(::rename(temp_.c_str(), target_.c_str()) == 0, "cannot write {}: rename from {} failed: {}",
             target_, temp_, errno_text(errno));
  committed_ = true;
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
