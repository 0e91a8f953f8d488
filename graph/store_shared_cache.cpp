// load_store in LoadMode::kSharedCache: see Note [shared cache] in store_format.h.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/error.h"
#include "graph/store_header.h"
#include "graph/store_load.h"

namespace dgcn {

std::string shared_cache_path(const std::string& path, const std::string& cache_dir) {
  if (cache_dir.empty()) return path + ".cache";
  namespace fs = std::filesystem;
  // The hash of the absolute path keeps two sources of one file name apart.
  const std::string abs = fs::weakly_canonical(fs::absolute(path)).string();
  const std::string name =
      fmt::format("{}.{:016x}.cache", fs::path(path).filename().string(), hash_bytes(abs.data(), abs.size()));
  return (fs::path(cache_dir) / name).string();
}

namespace detail {

namespace {

struct MappedStore {
  std::shared_ptr<MappedFile> map;
  StoreHeader header;
  FileStat stat;
};

// Read-only views of every section of a mapped all-raw file; each keeps the
// mapping alive.
std::vector<Buffer> section_views(const MappedStore& m) {
  std::vector<Buffer> views;
  for (const auto& s : m.header.sections) {
    const std::byte* p = m.map->data() + s.offset;
    views.push_back(Buffer::wrap(std::shared_ptr<const void>(m.map, p), p, s.raw_size));
  }
  return views;
}

void verify_mapped(const MappedStore& m, const std::string& path, int threads, LoadStats& stats) {
  const std::vector<FrameRef> refs = frame_refs(m.header);
  FrameRunStats run;
  auto failures = run_frames(
      m.header, path, refs.size(), threads, /*stop_at_first=*/true,
      [&](size_t i, FrameWorker& w) { w.check(refs[i], m.map->data() + refs[i].file_offset); }, &run);
  add_frame_stats(run, stats);
  if (!failures.empty()) throw Error(failures.front().message);
}

StoreCacheSource source_of(const OpenStore& src) {
  return {src.stat.size, src.stat.mtime_ns, src.header.header_checksum};
}

// Why `cache` is not an expansion of `src` ("" when it is).
std::string cache_mismatch(const StoreHeader& cache, const OpenStore& src) {
  const StoreCacheSource want = source_of(src);
  if (!(cache.source == want)) {
    return fmt::format(
        "stale: made from a source of {} bytes, mtime {} ns, header {:016x}; the source now has {} "
        "bytes, mtime {} ns, header {:016x}",
        cache.source.file_size, cache.source.mtime_ns, cache.source.header_checksum, want.file_size,
        want.mtime_ns, want.header_checksum);
  }
  const StoreHeader& h = src.header;
  if (!cache.all_raw()) return "not all sections are raw";
  if (cache.num_nodes != h.num_nodes || cache.num_edges != h.num_edges ||
      cache.num_features != h.num_features || cache.num_classes != h.num_classes || cache.task != h.task ||
      cache.id_width != h.id_width || cache.part_index != h.part_index || cache.part_count != h.part_count ||
      cache.num_global_nodes != h.num_global_nodes || cache.metadata_json != h.metadata_json ||
      cache.sections.size() != h.sections.size()) {
    return "its scalars or metadata differ from the source's";
  }
  for (size_t i = 0; i < h.sections.size(); ++i) {
    const StoreSection& a = cache.sections[i];
    const StoreSection& b = h.sections[i];
    if (a.name != b.name || a.raw_size != b.raw_size || a.frame_size != b.frame_size ||
        a.checksum != b.checksum) {
      return fmt::format("section '{}' differs from the source's", b.name);
    }
  }
  return "";
}

// Opens and maps the cache if its header says it is a complete expansion of
// `src`; otherwise says why not. Its data is checked separately
// (verify_mapped), so that waiting processes can do that outside the lock.
std::optional<MappedStore> open_cache(const std::string& cache_path, const OpenStore& src,
                                      std::string& why_not) {
  int raw_fd = ::open(cache_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw_fd < 0) {
    why_not =
        errno == ENOENT ? "absent" : fmt::format("cannot open {}: {}", cache_path, std::strerror(errno));
    return std::nullopt;
  }
  UniqueFd fd(raw_fd);
  try {
    MappedStore m;
    m.stat = stat_fd(fd.get(), cache_path);
    m.header = read_header(fd.get(), m.stat.size, cache_path);
    why_not = cache_mismatch(m.header, src);
    if (!why_not.empty()) return std::nullopt;
    m.map = std::make_shared<MappedFile>(fd.get(), m.stat.size, cache_path);
    return m;
  } catch (const Error& e) {
    why_not = fmt::format("unusable: {}", e.what());
    return std::nullopt;
  }
}

// A builder killed mid-way leaves "<cache>.tmp-<pid>-<n>" behind. Called
// under the cache's lock, when no other builder of this cache can be running.
void remove_dead_builders_files(const std::string& cache_path) {
  namespace fs = std::filesystem;
  const fs::path cache(cache_path);
  const std::string prefix = cache.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache.parent_path().empty() ? "." : cache.parent_path(), ec)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove(e.path(), ec);
  }
}

// Expands `src` into an all-raw .gcn at `cache_path` (temp name, rename),
// decoding on all cores and checking every source checksum on the way. The
// raw frames keep the source's frame size, so they keep its checksums.
void build_cache(const OpenStore& src, const std::string& cache_path, int threads, LoadStats& stats) {
  StoreHeader c = src.header;
  c.source = source_of(src);
  uint64_t cursor = c.header_size;
  for (auto& s : c.sections) {
    s.codec = StoreCodec::kRaw;
    s.offset = align_up(cursor, kRawAlignment);
    s.stored_size = s.raw_size;
    for (uint64_t i = 0; i < s.num_frames; ++i)
      c.frames[s.first_frame + i].stored_size = frame_raw_size(s, i);
    cursor = s.offset + s.raw_size;
  }
  c.file_size = cursor;

  remove_dead_builders_files(cache_path);
  AtomicFile out(cache_path);
  const std::vector<FrameRef> refs = frame_refs(src.header);
  FrameRunStats run;
  auto failures = run_frames(
      src.header, src.path, refs.size(), threads, /*stop_at_first=*/true,
      [&](size_t i, FrameWorker& w) {
        const FrameRef& f = refs[i];
        std::byte* raw = w.scratch(f.raw_size);
        w.read(src.fd.get(), f, raw);
        w.check(f, raw);
        pwrite_all(out.fd(), raw, f.raw_size, c.sections[f.section].offset + f.raw_offset, out.temp_path());
      },
      &run);
  add_frame_stats(run, stats);
  if (!failures.empty()) throw Error(failures.front().message);
  const std::vector<std::byte> header = encode_header(c);
  pwrite_all(out.fd(), header.data(), header.size(), 0, out.temp_path());
  out.commit();
}

}  // namespace

GraphStore load_shared(const OpenStore& file, const LoadOptions& options, int threads, LoadStats& stats) {
  stats.mapped = true;
  if (file.header.all_raw()) {
    MappedStore m{std::make_shared<MappedFile>(file.fd.get(), file.stat.size, file.path), file.header,
                  file.stat};
    if (options.verify_checksums) verify_mapped(m, file.path, threads, stats);
    stats.mapped_path = file.path;
    return assemble_store(m.header, section_views(m), file.path, options, threads, stats);
  }

  const std::string cache = shared_cache_path(file.path, options.cache_dir);
  if (!options.cache_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.cache_dir, ec);
    DGCN_CHECK(!ec, "{}: cannot create the cache directory {}: {}", file.path, options.cache_dir,
               ec.message());
  }
  std::string why_not;
  std::optional<MappedStore> m = open_cache(cache, file, why_not);
  std::optional<FileStat> failed_checksums;  // the cache file whose data was found damaged
  if (m && options.verify_checksums) {
    try {
      verify_mapped(*m, cache, threads, stats);
    } catch (const Error& e) {
      why_not = fmt::format("unusable: {}", e.what());
      failed_checksums = m->stat;
      m.reset();
    }
  }
  if (!m) {
    stats.cache_note = why_not;
    const std::string dir = std::filesystem::path(cache).parent_path().string();
    DGCN_CHECK(::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0,
               "{}: shared-cache mode must write its cache {} but cannot write to {} ({}); choose a writable "
               "cache folder (dgcn-train --cache-dir DIR; in Python open_store(..., cache_dir=DIR))",
               file.path, cache, dir.empty() ? "." : dir, std::strerror(errno));
    {
      // One process builds; the others block here, then find the cache built.
      FileLock lock(cache + ".lock");
      m = open_cache(cache, file, why_not);
      if (m && failed_checksums && m->stat.device == failed_checksums->device &&
          m->stat.inode == failed_checksums->inode) {
        m.reset();  // nobody replaced the damaged copy yet
      }
      if (!m) {
        build_cache(file, cache, threads, stats);
        stats.built_cache = true;
        m = open_cache(cache, file, why_not);
        DGCN_CHECK(m.has_value(), "{}: the shared cache {} just built is not usable: {}", file.path, cache,
                   why_not);
      }
    }
    // A cache another process built is checked outside the lock, so the
    // processes that waited for it check it in parallel.
    if (!stats.built_cache && options.verify_checksums) verify_mapped(*m, cache, threads, stats);
  }
  stats.mapped_path = cache;
  // Errors name the source: the cache holds its bytes.
  return assemble_store(m->header, section_views(*m), file.path, options, threads, stats);
}

}  // namespace detail

}  // namespace dgcn
