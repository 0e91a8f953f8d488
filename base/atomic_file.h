// The one way dgcn writes a file whole (the .gcn store, its shared cache,
// checkpoints, plots, result files): under a temporary name next to the
// target, fsynced, renamed over the target, and the folder fsynced, so a
// reader or a crash sees either the old file untouched or the complete new
// one, never a part. Files that grow line by line (the metrics JSONL) are
// appended in place instead.
//
//   AtomicFile out("run/model.bin");
//   out.write(bytes.data(), bytes.size());
//   out.commit();                 // without it the destructor removes the temporary
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/file_io.h"

namespace dgcn {

// A file created as "<target>.tmp-<pid>-<n>" in the target's folder.
// commit() fsyncs it, renames it over the target and fsyncs the folder; if
// commit() is never reached (an exception, a crash of this object's owner),
// the destructor removes the temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::string target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // For writers that place their bytes themselves (pwrite_all at offsets),
  // or hand the temporary's name to another program (gnuplot).
  int fd() const { return fd_.get(); }
  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_; }
  // Appends `size` bytes after everything write() wrote before.
  void write(const void* data, size_t size);
  void commit();

 private:
  std::string target_;
  std::string temp_;
  int slot_ = -1;  // in the signal handler's list of temporaries
  UniqueFd fd_;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// A folder built whole, as AtomicFile builds a file: created as
// "<target>.tmp-<pid>-<n>" beside the target, filled through path(), and
// renamed onto the target by commit(). The target must not exist or be an
// empty folder (rename replaces an empty one); until commit() the target is
// not touched, and the destructor (a failure) or SIGINT/SIGTERM (with
// remove_temporary_files_on_signals) removes the temporary folder with all
// it holds, so a failed or interrupted run leaves the target as it was.
//
//   AtomicFolder out("parts");
//   write_file_atomically(out.path() + "/a.gcn", ...);  // files go in the temporary
//   out.commit();                                       // "parts" appears whole
class AtomicFolder {
 public:
  explicit AtomicFolder(std::string target);
  AtomicFolder(const AtomicFolder&) = delete;
  AtomicFolder& operator=(const AtomicFolder&) = delete;
  ~AtomicFolder();

  const std::string& path() const { return temp_; }
  const std::string& target() const { return target_; }
  void commit();

 private:
  std::string target_;
  std::string temp_;
  int slot_ = -1;  // in the signal handler's list of temporary folders
  bool committed_ = false;
};

// Makes SIGINT and SIGTERM remove every AtomicFile's temporary and every
// AtomicFolder's temporary folder before the process ends by the signal's
// default action, so an interrupted run leaves no "*.tmp-*" files or
// folders. Call once, early in main (not in a process that installs its own
// handlers, such as the launcher).
void remove_temporary_files_on_signals();

// The line those signals print on stderr before the process ends, so a
// user who presses Ctrl-C learns where the run stands: `before`, the newest
// checkpoint given to set_interrupt_checkpoint (`none` until then), `after`.
// Nothing is printed until this is called. Each part is cut at 4 KiB.
void set_interrupt_note(const std::string& before, const std::string& none, const std::string& after);
// A complete checkpoint was just written at `path` (any thread).
void set_interrupt_checkpoint(const std::string& path);

// For tests that interrupt a program at a chosen moment: when the variable
// DGCN_TEST_PAUSE_AT is "<point>" or "<point>:<n>" and this is the n-th
// (default first) call with that point, prints "dgcn-test-paused-at <point>"
// on stderr and waits for a signal forever. Unset, it costs one getenv per
// process. The points AtomicFile and AtomicFolder pass: "atomic-file-created"
// (an empty temporary), "atomic-file-commit" (a full temporary, before its
// rename), "atomic-file-committed" (just renamed), "atomic-folder-created",
// "atomic-folder-commit" (the folder filled, before its rename).
void test_pause_point(const char* point);

// `bytes` as the whole content of `path`, through an AtomicFile.
void write_file_atomically(const std::string& path, std::span<const std::byte> bytes);
void write_file_atomically(const std::string& path, std::string_view text);

}  // namespace dgcn
