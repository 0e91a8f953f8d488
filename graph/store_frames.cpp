#include "graph/store_frames.h"

#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "base/digest.h"
#include "base/error.h"
#include "base/file_io.h"
#include "base/mutex.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "graph/store_header.h"

namespace dgcn::detail {

std::vector<FrameRef> frame_refs(const StoreHeader& h) {
  std::vector<FrameRef> refs;
  refs.reserve(h.frames.size());
  for (size_t si = 0; si < h.sections.size(); ++si) {
    const StoreSection& s = h.sections[si];
    uint64_t file_offset = s.offset;
    for (uint64_t i = 0; i < s.num_frames; ++i) {
      const StoreFrame& f = h.frames[s.first_frame + i];
      refs.push_back(
          FrameRef{si, i, file_offset, f.stored_size, i * s.frame_size, frame_raw_size(s, i), f.checksum});
      file_offset += f.stored_size;
    }
  }
  return refs;
}

FrameWorker::FrameWorker(const StoreHeader& header, const std::string& path) : header_(header), path_(path) {
  dctx_ = ZSTD_createDCtx();
  DGCN_CHECK(dctx_ != nullptr, "{}: cannot create a zstd decompression context", path);
}

FrameWorker::~FrameWorker() {
  ZSTD_freeDCtx(dctx_);
}

std::byte* FrameWorker::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void FrameWorker::read(int fd, const FrameRef& f, std::byte* dest) {
  const StoreSection& s = header_.sections[f.section];
  auto t0 = Clock::now();
  if (s.codec == StoreCodec::kRaw) {
    pread_all(fd, dest, f.raw_size, f.file_offset, path_);
    read_seconds += seconds_since(t0);
    return;
  }
  // decode_header bounded stored_size by ZSTD_compressBound(frame_size).
  if (stored_.size() < f.stored_size) stored_.resize(f.stored_size);
  pread_all(fd, stored_.data(), f.stored_size, f.file_offset, path_);
  read_seconds += seconds_since(t0);
  t0 = Clock::now();
  size_t got = ZSTD_decompressDCtx(dctx_, dest, f.raw_size, stored_.data(), f.stored_size);
  decompress_seconds += seconds_since(t0);
  DGCN_CHECK(!ZSTD_isError(got), "{}: section '{}' frame {} (file bytes [{}, {})): zstd cannot decode it: {}",
             path_, s.name, f.index, f.file_offset, f.file_offset + f.stored_size, ZSTD_getErrorName(got));
  DGCN_CHECK(got == f.raw_size, "{}: section '{}' frame {} decodes to {} bytes, expected {}", path_, s.name,
             f.index, got, f.raw_size);
  decompressed_bytes += got;
}

void FrameWorker::check(const FrameRef& f, const std::byte* data) {
  auto t0 = Clock::now();
  const uint64_t computed = hash_bytes(data, f.raw_size);
  checksum_seconds += seconds_since(t0);
  checksummed_bytes += f.raw_size;
  DGCN_CHECK(
      computed == f.checksum,
      "{}: section '{}' frame {} (raw bytes [{}, {})): checksum mismatch (stored {:016x}, computed {:016x})",
      path_, header_.sections[f.section].name, f.index, f.raw_offset, f.raw_offset + f.raw_size, f.checksum,
      computed);
}

std::vector<FrameFailure> run_frames(const StoreHeader& header, const std::string& path, size_t num_frames,
                                     int threads, bool stop_at_first,
                                     const std::function<void(size_t, FrameWorker&)>& fn,
                                     FrameRunStats* stats) {
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<size_t>(num_frames, 1))));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  struct {
    Mutex mutex;
    std::vector<FrameFailure> failures GUARDED_BY(mutex);
    FrameRunStats total GUARDED_BY(mutex);
  } shared;
  auto t0 = Clock::now();
  parallel_for(threads, threads, [&](int64_t, int64_t, int) {
    FrameWorker worker(header, path);
    for (;;) {
      if (stop_at_first && failed.load(std::memory_order_relaxed)) break;
      size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= num_frames) break;
      try {
        fn(i, worker);
      } catch (const std::exception& e) {
        MutexLock lock(&shared.mutex);
        shared.failures.push_back({i, e.what()});
        failed = true;
      }
    }
    MutexLock lock(&shared.mutex);
    FrameRunStats& total = shared.total;
    total.read_cpu_seconds += worker.read_seconds;
    total.decompress_cpu_seconds += worker.decompress_seconds;
    total.checksum_cpu_seconds += worker.checksum_seconds;
    total.decompressed_bytes += worker.decompressed_bytes;
    total.checksummed_bytes += worker.checksummed_bytes;
  });
  // Every thread has joined: the shared state is this thread's alone now.
  MutexLock lock(&shared.mutex);
  shared.total.wall_seconds = seconds_since(t0);
  if (stats != nullptr) *stats = shared.total;
  std::vector<FrameFailure> failures = std::move(shared.failures);
  std::sort(failures.begin(), failures.end(), [](const auto& a, const auto& b) { return a.frame < b.frame; });
  return failures;
}

}  // namespace dgcn::detail
