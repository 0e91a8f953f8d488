// The per-epoch metrics file (--metrics-out): JSON lines appended and
// flushed one at a time under the file's final name, so `tail -f` shows
// epochs as they end and nothing is lost when the run stops.
//
//   {"config": {...}, "first_epoch": 1}      a record line at every (re)start
//   {"epoch": 1, "loss": 1.23, ...}          one line per epoch
//   {"epoch": 2, ...}
//
// A resumed run keeps what the file holds up to the checkpoint's epoch and
// drops the lines of later epochs (they belong to the run that was cut
// short), then appends. A failed write (a full disk) is an error at once,
// naming the file and the system's reason; the file then ends at the last
// complete line it had.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "train/training_plot.h"

namespace dgcn {

class MetricsLog {
 public:
  // No file: write() does nothing.
  MetricsLog() = default;
  // Opens `path` for this run: a fresh run (keep_through_epoch < 0)
  // truncates it; a resumed one keeps the lines whose "epoch" is at most
  // keep_through_epoch (and the record lines before them). Throws
  // dgcn::Error naming the file.
  MetricsLog(std::string path, int64_t keep_through_epoch);

  // Appends `line` and a newline; throws dgcn::Error on any failure after
  // cutting the file back to where the line began (whole lines only).
  void write(const nlohmann::json& line);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  UniqueFd fd_;
};

// The curve points of the epoch lines in `path` (a --metrics-out file, whose
// task metric is named `metric`: "acc" reads train_acc, valid_acc, test_acc)
// up to the first line that is not complete JSON. A resumed run draws these
// epochs before its own, so its plot shows the whole run, not only the part
// after the checkpoint. A missing file has none.
std::vector<CurvePoint> curve_of_metrics_file(const std::string& path, const std::string& metric);

}  // namespace dgcn
