#include "datasets/edgelist_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "base/mutex.h"
#include "base/parallel.h"
#include "datasets/csv.h"
#include "datasets/store_assembly.h"
#include "graph/file_kind.h"

namespace dgcn {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

struct ChunkEdges {
  std::vector<int64_t> src, dst;
  int64_t max_id = -1;
};

// Splits `text` at runs of spaces/tabs; returns the number of fields and
// stores the first two.
int split_fields(std::string_view text, std::string_view& a, std::string_view& b) {
  int fields = 0;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (fields == 0) a = text.substr(start, i - start);
    if (fields == 1) b = text.substr(start, i - start);
    ++fields;
  }
  return fields;
}

// Note [Sparse edge list ids]: SNAP files often number nodes with gaps (ids
// up to 10^9 for a million nodes). Taking ids as they are would allocate for
// every id up to the largest, so memory would follow the largest number in
// the file, not its size. When most ids would be isolated (the largest id is
// at least twice the edge count), the ids present are renumbered densely in
// increasing order and the file's ids become the store's node ids
// (GraphStore::source_ids), which every output reports.
int64_t compact_ids(std::vector<int64_t>& src, std::vector<int64_t>& dst, Buffer& source_ids) {
  std::vector<int64_t> ids;
  ids.reserve(src.size() + dst.size());
  ids.insert(ids.end(), src.begin(), src.end());
  ids.insert(ids.end(), dst.begin(), dst.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto renumber = [&](std::vector<int64_t>& v) {
    for (int64_t& x : v) x = std::lower_bound(ids.begin(), ids.end(), x) - ids.begin();
  };
  renumber(src);
  renumber(dst);
  const auto n = static_cast<int64_t>(ids.size());
  source_ids = Buffer::from_vector(std::move(ids));
  return n;
}

}  // namespace

GraphStore read_edgelist(const EdgeListOptions& options) {
  const int threads = resolve_threads(options.num_threads);
  const std::string& path = options.file;
  const FileKind kind = file_kind(path);
  DGCN_CHECK(kind != FileKind::kStore && kind != FileKind::kZip && kind != FileKind::kTorch &&
                 kind != FileKind::kNpy && kind != FileKind::kPickle,
             "{}: not an edge list: {}", path, file_kind_hint(path));
  const int64_t limit = options.num_nodes > 0 ? options.num_nodes : INT64_MAX;

  struct {
    Mutex mutex;
    std::vector<ChunkEdges> parts GUARDED_BY(mutex);  // by chunk index
  } shared;
  StreamStats stats = stream_line_chunks(
      path, threads,
      [&](const LineChunk& chunk) {
        ChunkEdges edges;
        for_each_line(chunk, [&](int64_t line, std::string_view text) {
          size_t first = 0;
          while (first < text.size() && is_space(text[first])) ++first;
          if (first == text.size() || text[first] == '#') return;
          std::string_view a, b;
          int fields = split_fields(text, a, b);
          DGCN_CHECK(fields == 2, "{}: line {}: {} has {} fields, expected 'src dst'", path, line,
                     quote_value(text), fields);
          int64_t s = 0, d = 0;
          DGCN_CHECK(parse_number(a, s) && s >= 0, "{}: line {}: source {} is not a node id", path, line,
                     quote_value(a));
          DGCN_CHECK(parse_number(b, d) && d >= 0, "{}: line {}: destination {} is not a node id", path, line,
                     quote_value(b));
          DGCN_CHECK(s < limit && d < limit, "{}: line {}: node id {} is not below num_nodes {}", path, line,
                     std::max(s, d), limit);
          edges.src.push_back(s);
          edges.dst.push_back(d);
          edges.max_id = std::max({edges.max_id, s, d});
        });
        MutexLock lock(&shared.mutex);
        auto& parts = shared.parts;
        if (parts.size() <= static_cast<size_t>(chunk.index)) parts.resize(chunk.index + 1);
        parts[chunk.index] = std::move(edges);
      },
      options.chunk_bytes);
  std::vector<ChunkEdges> parts;
  {
    MutexLock lock(&shared.mutex);  // the parsing threads have joined
    parts = std::move(shared.parts);
  }

  // Concatenate in file order, releasing each part as it is copied.
  size_t total = 0;
  int64_t max_id = -1;
  for (const auto& p : parts) {
    total += p.src.size();
    max_id = std::max(max_id, p.max_id);
  }
  std::vector<int64_t> src, dst;
  src.reserve(total);
  dst.reserve(total);
  for (auto& p : parts) {
    src.insert(src.end(), p.src.begin(), p.src.end());
    dst.insert(dst.end(), p.dst.begin(), p.dst.end());
    p = ChunkEdges{};
  }
  GraphStore store;
  int64_t n = options.num_nodes > 0 ? options.num_nodes : max_id + 1;
  if (options.num_nodes == 0 && max_id >= 2 * static_cast<int64_t>(total) + 1) {
    n = compact_ids(src, dst, store.source_ids);
    spdlog::info(
        "edgelist: {}: ids up to {} name only {} nodes: renumbered 0..{}, the file's ids kept as node ids",
        path, max_id, n, n - 1);
  }
  spdlog::info("edgelist: {}: {} lines, {} edges, {} nodes, {:.1f} MB of text in {:.2f} s", path, stats.lines,
               total, n, stats.text_bytes / 1e6, stats.seconds);

  nlohmann::json meta = {{"reader", "edgelist"}, {"file", path}};
  meta["edges"] = set_graph(store, n, std::move(src), std::move(dst), options.edges, threads, path);
  store.metadata_json = meta.dump();
  store.validate("edgelist: " + path, threads);
  return store;
}

}  // namespace dgcn
