// load_store's entry point, private loads (every array decoded into this
// process's memory) and verify_store.
#include <sys/mman.h>

#include <chrono>

#include "base/error.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "graph/store_header.h"
#include "graph/store_load.h"

namespace dgcn {

namespace {

// Asks for transparent huge pages on a large array about to be filled: 512x
// fewer page faults while decoding, fewer TLB misses when sampling gathers
// rows later. Only a hint; where THP is off it changes nothing.
void advise_huge_pages(std::byte* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}
}  // namespace

namespace detail {

OpenStore open_store(const std::string& path) {
  OpenStore f;
  f.path = path;
  f.fd = open_read(path);
  f.stat = stat_fd(f.fd.get(), path);
  f.header = read_header(f.fd.get(), f.stat.size, path);
  return f;
}

GraphStore assemble_store(const StoreHeader& h, std::vector<Buffer> sections, const std::string& path,
                          const LoadOptions& options, int threads, LoadStats& stats) {
  DGCN_ASSERT(sections.size() == h.sections.size());
  auto take = [&](std::string_view name) {
    for (size_t i = 0; i < h.sections.size(); ++i)
      if (h.sections[i].name == name) return std::move(sections[i]);
    return Buffer();
  };
  GraphStore s;
  Buffer indptr = take("indptr");
  Buffer indices = take("indices");
  const int64_t columns = h.part_count > 0 ? h.num_global_nodes : h.num_nodes;
  s.graph = Csr(h.num_nodes, columns, std::move(indptr), std::move(indices), h.id_width, path);
  s.num_features = h.num_features;
  s.features = take("features");
  s.task = h.task;
  s.num_classes = h.num_classes;
  s.labels = take("labels");
  s.train = take("train");
  s.valid = take("valid");
  s.test = take("test");
  s.degree = take("degree");
  s.source_ids = take("node_ids");
  s.part.index = h.part_index;
  s.part.count = h.part_count;
  s.part.num_global_nodes = h.num_global_nodes;
  s.part.global_ids = take("global_ids");
  s.part.node_parts = take("node_parts");
  s.metadata_json = h.metadata_json;
  if (options.validate) {
    const auto t0 = Clock::now();
    s.validate(path, threads);
    stats.validate_seconds = seconds_since(t0);
  }
  return s;
}

void add_frame_stats(const FrameRunStats& run, LoadStats& stats) {
  stats.frames_seconds += run.wall_seconds;
  stats.decompress_cpu_seconds += run.decompress_cpu_seconds;
  stats.checksum_cpu_seconds += run.checksum_cpu_seconds;
  stats.decompressed_bytes += run.decompressed_bytes;
  stats.checksummed_bytes += run.checksummed_bytes;
}

GraphStore load_private(const OpenStore& file, const LoadOptions& options, int threads, LoadStats& stats) {
  const StoreHeader& h = file.header;
  // decode_header has bounded every raw_size by what the file can hold.
  std::vector<Buffer> buffers;
  std::vector<std::byte*> dest;
  for (const auto& s : h.sections) {
    MutableBuffer b = Buffer::allocate(s.raw_size);
    dest.push_back(b.data());
    buffers.push_back(std::move(b));
    advise_huge_pages(dest.back(), s.raw_size);
  }
  const std::vector<FrameRef> refs = frame_refs(h);
  FrameRunStats run;
  auto failures = run_frames(
      h, file.path, refs.size(), threads, /*stop_at_first=*/true,
      [&](size_t i, FrameWorker& w) {
        const FrameRef& f = refs[i];
        std::byte* out = dest[f.section] + f.raw_offset;
        w.read(file.fd.get(), f, out);
        if (options.verify_checksums) w.check(f, out);
      },
      &run);
  add_frame_stats(run, stats);
  if (!failures.empty()) throw Error(failures.front().message);
  return assemble_store(h, std::move(buffers), file.path, options, threads, stats);
}

}  // namespace detail

GraphStore load_store(const std::string& path, const LoadOptions& options, LoadStats* stats) {
  const auto t0 = Clock::now();
  LoadStats local;
  LoadStats& st = stats != nullptr ? *stats : local;
  st = LoadStats{};
  const int threads = options.threads > 0 ? options.threads : default_num_threads();
  st.threads = threads;
  detail::OpenStore file = detail::open_store(path);
  st.file_bytes = file.stat.size;
  st.raw_bytes = file.header.raw_bytes();
  GraphStore store = options.mode == LoadMode::kPrivate ? detail::load_private(file, options, threads, st)
                                                        : detail::load_shared(file, options, threads, st);
  st.seconds = seconds_since(t0);
  return store;
}

bool VerifyReport::ok() const {
  for (const auto& s : sections)
    if (!s.ok()) return false;
  return true;
}

VerifyReport verify_store(const std::string& path, int threads) {
  const auto t0 = Clock::now();
  if (threads <= 0) threads = default_num_threads();
  detail::OpenStore file = detail::open_store(path);
  const StoreHeader& h = file.header;
  VerifyReport report;
  report.path = path;
  report.file_bytes = file.stat.size;
  for (const auto& s : h.sections) {
    report.sections.push_back({s.name, s.codec, s.stored_size, s.raw_size, s.num_frames, 0, ""});
  }
  const std::vector<detail::FrameRef> refs = detail::frame_refs(h);
  auto failures = detail::run_frames(h, path, refs.size(), threads, /*stop_at_first=*/false,
                                     [&](size_t i, detail::FrameWorker& w) {
                                       const detail::FrameRef& f = refs[i];
                                       std::byte* out = w.scratch(f.raw_size);
                                       w.read(file.fd.get(), f, out);
                                       w.check(f, out);
                                     });
  for (const auto& fail : failures) {  // sorted by frame, so first_error is the lowest frame
    SectionCheck& c = report.sections[refs[fail.frame].section];
    if (c.bad_frames++ == 0) c.first_error = fail.message;
  }
  report.seconds = seconds_since(t0);
  return report;
}

}  // namespace dgcn
