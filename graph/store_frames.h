// The frame loop every .gcn reader path shares: private loads, shared-cache
// builds and verify_store all walk the frame table on all cores, read (and
// decompress) each frame, and check its checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/store_format.h"

struct ZSTD_DCtx_s;

namespace dgcn::detail {

// One frame of a file, placed both in the file and in its section's raw bytes.
struct FrameRef {
  size_t section = 0;  // index into StoreHeader::sections
  uint64_t index = 0;  // frame number within the section
  uint64_t file_offset = 0;
  uint64_t stored_size = 0;
  uint64_t raw_offset = 0;  // within the section's raw bytes
  uint64_t raw_size = 0;
  uint64_t checksum = 0;
};
// Every frame of a (checked) header, in frame-table order.
std::vector<FrameRef> frame_refs(const StoreHeader& h);

// What one thread of run_frames owns: a zstd context, scratch buffers sized
// for one frame, and its share of the timers.
class FrameWorker {
 public:
  FrameWorker(const StoreHeader& header, const std::string& path);
  ~FrameWorker();
  FrameWorker(const FrameWorker&) = delete;
  FrameWorker& operator=(const FrameWorker&) = delete;

  // Reads frame `f` from `fd` and decodes it into `dest` (f.raw_size bytes).
  void read(int fd, const FrameRef& f, std::byte* dest);
  // Throws naming the section and frame when `data` (f.raw_size bytes) does
  // not hash to the frame's checksum.
  void check(const FrameRef& f, const std::byte* data);
  // A buffer of at least one frame's raw size, owned by this worker.
  std::byte* scratch(size_t bytes);

  double read_seconds = 0, decompress_seconds = 0, checksum_seconds = 0;
  uint64_t decompressed_bytes = 0, checksummed_bytes = 0;

 private:
  const StoreHeader& header_;
  const std::string& path_;
  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<std::byte> stored_;
  std::vector<std::byte> scratch_;
};

struct FrameFailure {
  size_t frame;  // index into the FrameRef list
  std::string message;
};

struct FrameRunStats {
  double wall_seconds = 0;
  double read_cpu_seconds = 0, decompress_cpu_seconds = 0, checksum_cpu_seconds = 0;
  uint64_t decompressed_bytes = 0, checksummed_bytes = 0;
};

// Calls fn(frame_index, worker) for every frame, handed out in order to
// `threads` threads. An exception from fn becomes that frame's failure. With
// stop_at_first, no new frame starts after a failure; since frames are taken
// in order and every taken frame finishes, the first failure returned is the
// lowest-numbered bad frame whatever the thread count.
std::vector<FrameFailure> run_frames(const StoreHeader& header, const std::string& path, size_t num_frames,
                                     int threads, bool stop_at_first,
                                     const std::function<void(size_t, FrameWorker&)>& fn,
                                     FrameRunStats* stats = nullptr);

}  // namespace dgcn::detail
