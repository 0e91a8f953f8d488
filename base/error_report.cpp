#include "base/error_report.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace dgcn {
namespace {

// The launcher's socket, when this process is one of its ranks; -1 if not.
int launcher_socket() {
  const char* value = std::getenv(kErrorSocketVariable);
  if (value == nullptr || *value == '\0') return -1;
  char* end = nullptr;
  const long fd = std::strtol(value, &end, 10);
  if (*end != '\0' || fd < 0 || fd > 1 << 20) return -1;
  int type = 0;
  socklen_t len = sizeof(type);
  // Only a datagram socket: an unrelated descriptor of that number is left alone.
  if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM) {
    return -1;
  }
  return static_cast<int>(fd);
}

void write_stderr(std::string_view line) {
  std::cerr.flush();
  while (!line.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void report_error_line(const std::string& line) {
  if (const int fd = launcher_socket(); fd >= 0) {
    // MSG_NOSIGNAL: a launcher that is gone means stderr, not SIGPIPE;
    // MSG_DONTWAIT: so does a full queue (never a rank waiting on it).
    ssize_t n;
    do {
      n = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(line.size())) return;
  }
  write_stderr(line);
}

}  // namespace dgcn
