// save_store: lays out the sections, writes them (zstd frames compressed in
// bounded batches on all cores, raw sections written and checksummed frame
// by frame), then the header, all under a temporary name that is renamed
// over the target only once everything is on disk.
#include <zstd.h>

#include <chrono>
#include <memory>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "graph/store_format.h"
#include "graph/store_header.h"

namespace dgcn {

namespace {

struct SectionData {
  StoreSection entry;
  const std::byte* data = nullptr;
};

const Buffer& buffer_named(const GraphStore& s, std::string_view name) {
  if (name == "indptr") return s.graph.indptr_buffer();
  if (name == "indices") return s.graph.indices_buffer();
  if (name == "features") return s.features;
  if (name == "labels") return s.labels;
  if (name == "train") return s.train;
  if (name == "valid") return s.valid;
  if (name == "test") return s.test;
  if (name == "node_ids") return s.source_ids;
  if (name == "global_ids") return s.part.global_ids;
  if (name == "node_parts") return s.part.node_parts;
  return s.degree;
}

// The store's non-empty arrays as (unplaced) sections, each checked against
// the size the scalars give it.
std::vector<SectionData> sections_of(const GraphStore& store, const StoreHeader& h, const std::string& what) {
  std::vector<SectionData> out;
  for (std::string_view name : detail::kSectionNames) {
    const Buffer& b = buffer_named(store, name);
    const detail::SectionShape want = detail::expected_shape(name, h, what);
    const size_t elem = dtype_size(want.dtype);
    StoreSection s;
    s.name = std::string(name);
    s.dtype = want.dtype;
    s.cols = want.cols;
    if (want.any_rows) {
      DGCN_CHECK(b.size() % elem == 0 && b.size() / elem <= want.rows,
                 "{}: {} has {} bytes, expected at most {} int64 node ids", what, name, b.size(), want.rows);
      s.rows = b.size() / elem;
    } else {
      s.rows = want.rows;
      DGCN_CHECK(b.size() == want.rows * want.cols * elem,
                 "{}: {} has {} bytes, expected [{} x {}] {} = {} bytes", what, name, b.size(), want.rows,
                 want.cols, dtype_name(want.dtype), want.rows * want.cols * elem);
    }
    s.raw_size = b.size();
    if (s.raw_size > 0) out.push_back({std::move(s), b.data()});
  }
  return out;
}

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

void write_raw_section(int fd, const std::string& file, const SectionData& sec, StoreFrame* frames,
                       int threads) {
  const StoreSection& s = sec.entry;
  parallel_for_chunks(static_cast<int64_t>(s.num_frames), 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t raw = detail::frame_raw_size(s, i);
      const std::byte* src = sec.data + i * s.frame_size;
      frames[i] = {raw, hash_bytes(src, raw)};
      pwrite_all(fd, src, raw, s.offset + i * s.frame_size, file);
    }
  });
}

// Compresses `batch` frames at a time in parallel (one context per thread),
// then appends them in frame order, so memory stays bounded by the batch and
// the bytes do not depend on the thread count. Returns the stored size.
uint64_t write_zstd_section(int fd, const std::string& file, const SectionData& sec, StoreFrame* frames,
                            int threads, int level) {
  const StoreSection& s = sec.entry;
  std::vector<std::unique_ptr<ZSTD_CCtx, CCtxDeleter>> contexts(threads);
  for (auto& c : contexts) {
    c.reset(ZSTD_createCCtx());
    DGCN_CHECK(c != nullptr, "{}: cannot create a zstd compression context", file);
  }
  const uint64_t batch = static_cast<uint64_t>(threads) * 2;
  std::vector<std::vector<std::byte>> out(std::min<uint64_t>(batch, s.num_frames));
  uint64_t stored = 0;
  for (uint64_t first = 0; first < s.num_frames; first += batch) {
    const uint64_t count = std::min(batch, s.num_frames - first);
    parallel_for(static_cast<int64_t>(count), threads, [&](int64_t begin, int64_t end, int t) {
      for (int64_t j = begin; j < end; ++j) {
        const uint64_t i = first + j;
        const uint64_t raw = detail::frame_raw_size(s, i);
        const std::byte* src = sec.data + i * s.frame_size;
        out[j].resize(ZSTD_compressBound(raw));
        size_t n = ZSTD_compressCCtx(contexts[t].get(), out[j].data(), out[j].size(), src, raw, level);
        DGCN_CHECK(!ZSTD_isError(n), "{}: zstd failed on section '{}' frame {}: {}", file, s.name, i,
                   ZSTD_getErrorName(n));
        out[j].resize(n);
        frames[i] = {n, hash_bytes(src, raw)};
      }
    });
    for (uint64_t j = 0; j < count; ++j) {
      pwrite_all(fd, out[j].data(), out[j].size(), s.offset + stored, file);
      stored += out[j].size();
    }
  }
  return stored;
}

}  // namespace

SaveResult save_store(const GraphStore& store, const std::string& path, const SaveOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string what = "save_store " + path;
  DGCN_CHECK(options.frame_bytes >= 1 && options.frame_bytes <= detail::kMaxFrameBytes,
             "{}: frame_bytes {} is outside [1, {}]", what, options.frame_bytes, detail::kMaxFrameBytes);
  DGCN_CHECK(options.zstd_level >= ZSTD_minCLevel() && options.zstd_level <= ZSTD_maxCLevel(),
             "{}: zstd level {} is outside [{}, {}]", what, options.zstd_level, ZSTD_minCLevel(),
             ZSTD_maxCLevel());
  const int threads = options.threads > 0 ? options.threads : default_num_threads();

  StoreHeader h;
  h.num_nodes = store.num_nodes();
  h.num_edges = store.num_edges();
  h.num_features = store.num_features;
  h.num_classes = store.num_classes;
  h.task = store.task;
  h.id_width = store.graph.id_width();
  h.part_index = store.part.index;
  h.part_count = store.part.count;
  h.num_global_nodes = store.part.num_global_nodes;
  h.metadata_json = store.metadata_json;
  detail::check_scalars(h, what);
  std::vector<SectionData> sections = sections_of(store, h, what);

  uint64_t num_frames = 0;
  for (auto& sec : sections) {
    StoreSection& s = sec.entry;
    const bool compress = !options.all_raw && s.raw_size >= options.zstd_min_bytes;
    s.codec = compress ? StoreCodec::kZstd : StoreCodec::kRaw;
    s.frame_size = options.frame_bytes;
    s.first_frame = num_frames;
    s.num_frames = (s.raw_size + s.frame_size - 1) / s.frame_size;
    num_frames += s.num_frames;
  }
  h.frames.resize(num_frames);
  h.header_size = detail::header_size_for(sections.size(), num_frames, h.metadata_json.size());

  AtomicFile out(path);
  uint64_t cursor = h.header_size;
  for (auto& sec : sections) {
    StoreSection& s = sec.entry;
    StoreFrame* frames = h.frames.data() + s.first_frame;
    if (s.codec == StoreCodec::kRaw) {
      s.offset = detail::align_up(cursor, detail::kRawAlignment);
      write_raw_section(out.fd(), out.temp_path(), sec, frames, threads);
      s.stored_size = s.raw_size;
    } else {
      s.offset = cursor;
      s.stored_size = write_zstd_section(out.fd(), out.temp_path(), sec, frames, threads, options.zstd_level);
    }
    s.checksum = detail::section_checksum({frames, s.num_frames});
    cursor = s.offset + s.stored_size;
    h.sections.push_back(s);
    if (options.progress) {
      options.progress(fmt::format("{}: section '{}' ({}, {} frames): {} -> {} bytes", path, s.name,
                                   codec_name(s.codec), s.num_frames, s.raw_size, s.stored_size));
    }
  }
  h.file_size = cursor;
  const std::vector<std::byte> header = detail::encode_header(h);
  DGCN_ASSERT(header.size() == h.header_size);
  pwrite_all(out.fd(), header.data(), header.size(), 0, out.temp_path());
  out.commit();

  SaveResult result;
  result.file_bytes = h.file_size;
  result.raw_bytes = h.raw_bytes();
  result.seconds = seconds_since(t0);
  return result;
}

}  // namespace dgcn
