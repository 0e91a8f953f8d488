#include "train/metrics_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"

namespace dgcn {
namespace {

// Calls fn(line, json) for each line of `path` that is complete JSON, up to
// the first that is not (a line without its newline was cut short) or until
// fn returns false. The one reading of a --metrics-out file.
template <class F>
void for_each_json_line(const std::string& path, F&& fn) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline: a line cut short
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !fn(line, j)) break;
  }
}

bool is_epoch_line(const nlohmann::json& j) {
  return j.contains("epoch") && j["epoch"].is_number_integer();
}

// The lines of `path` a resumed run keeps: complete JSON lines up to the
// first one of an epoch after `keep_through_epoch`.
std::string kept_lines(const std::string& path, int64_t keep_through_epoch) {
  std::string kept;
  for_each_json_line(path, [&](const std::string& line, const nlohmann::json& j) {
    if (is_epoch_line(j) && j["epoch"].get<int64_t>() > keep_through_epoch) return false;
    kept += line;
    kept += '\n';
    return true;
  });
  return kept;
}

}  // namespace

MetricsLog::MetricsLog(std::string path, int64_t keep_through_epoch) : path_(std::move(path)) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
  if (keep_through_epoch >= 0) {
    // Rewritten whole first (atomically), so a crash here loses nothing.
    const std::string kept = kept_lines(path_, keep_through_epoch);
    std::error_code ec;
    const bool regular = !std::filesystem::exists(path_, ec) || std::filesystem::is_regular_file(path_, ec);
    if (regular) write_file_atomically(path_, kept);
    flags |= O_APPEND;
  } else {
    flags |= O_TRUNC;
  }
  const int fd = ::open(path_.c_str(), flags, 0666);
  DGCN_CHECK(fd >= 0, "metrics {}: cannot open: {}", path_, std::strerror(errno));
  fd_ = UniqueFd(fd);
}

std::vector<CurvePoint> curve_of_metrics_file(const std::string& path, const std::string& metric) {
  std::vector<CurvePoint> out;
  for_each_json_line(path, [&](const std::string&, const nlohmann::json& j) {
    if (!is_epoch_line(j)) return true;  // a record line
    CurvePoint p;
    p.epoch = j["epoch"].get<int64_t>();
    p.loss = j.value("loss", 0.0);
    p.train = j.value("train_" + metric, 0.0);
    p.evaluated = j.contains("valid_" + metric) && j.contains("test_" + metric);
    if (p.evaluated) {
      p.valid = j["valid_" + metric].get<double>();
      p.test = j["test_" + metric].get<double>();
    }
    out.push_back(p);
    return true;
  });
  return out;
}

void MetricsLog::write(const nlohmann::json& line) {
  if (!fd_) return;
  const std::string text = line.dump() + "\n";
  // A line is written whole or not at all: a failed write (a full disk) cuts
  // the file back to where this line began, so every reader, and a resumed
  // run, sees complete JSON lines only.
  const off_t begin = ::lseek(fd_.get(), 0, SEEK_END);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "no progress";
      if (begin >= 0 && ::ftruncate(fd_.get(), begin) != 0) {
        throw Error(fmt::format("metrics {}: write failed: {}; cutting back the partial line failed too: {}",
                                path_, why, std::strerror(errno)));
      }
      throw Error(
          fmt::format("metrics {}: write failed: {} (the file keeps its complete lines)", path_, why));
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace dgcn
