#include "datasets/ogb_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "datasets/csv.h"
#include "datasets/store_assembly.h"

namespace dgcn {

namespace {

namespace fs = std::filesystem;

// gzip cannot expand text by more than ~1032:1, so a file of B bytes holds at
// most this many bytes of text: a bound that keeps a lying count file from
// driving a huge allocation before the data is seen.
uint64_t max_text_bytes(const std::string& path) {
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  DGCN_CHECK(!ec, "{}: cannot read its size ({})", path, ec.message());
  return path.ends_with(".gz") ? size * 1032 + 4096 : size;
}

void check_plausible(const std::string& path, int64_t lines, int64_t min_line_bytes,
                     const char* count_source) {
  DGCN_CHECK(static_cast<uint64_t>(lines) <= max_text_bytes(path) / static_cast<uint64_t>(min_line_bytes),
             "{}: {} announces {} lines, more than this {}-byte file can hold", path, count_source, lines,
             fs::file_size(path));
}

// DIR/base.csv.gz, else DIR/base.csv; "" when neither exists and !required.
std::string find_csv(const fs::path& dir, const std::string& base, bool required) {
  for (const char* ext : {".csv.gz", ".csv"}) {
    fs::path p = dir / (base + ext);
    if (fs::exists(p)) return p.string();
  }
  DGCN_CHECK(!required, "ogb: {} has neither {}.csv.gz nor {}.csv", dir.string(), base, base);
  return "";
}

// Streams `path`, which must have exactly `expected` lines, calling
// fn(row, line_number, text) for every line on the worker threads.
template <class Fn>
void parse_rows(const std::string& path, int64_t expected, const char* count_source, int threads,
                size_t chunk_bytes, Fn&& fn) {
  StreamStats stats = stream_line_chunks(
      path, threads,
      [&](const LineChunk& chunk) {
        for_each_line(chunk, [&](int64_t line, std::string_view text) {
          DGCN_CHECK(line <= expected, "{}: line {}: more lines than the {} that {} announces", path, line,
                     expected, count_source);
          fn(line - 1, line, text);
        });
      },
      chunk_bytes);
  DGCN_CHECK(stats.lines == expected, "{}: has {} lines, but {} announces {}", path, stats.lines,
             count_source, expected);
  spdlog::info("ogb: {}: {} lines, {:.1f} MB of text in {:.2f} s ({:.0f} MB/s)", path, stats.lines,
               stats.text_bytes / 1e6, stats.seconds, stats.text_bytes / 1e6 / std::max(stats.seconds, 1e-9));
}

// Number of fields of the first line of `path` (0 for an empty file).
int64_t first_line_fields(const std::string& path) {
  LineChunkReader reader(path, size_t{1} << 16);
  LineChunk chunk;
  if (!reader.next(chunk)) return 0;
  int64_t fields = 0;
  bool first = true;
  for_each_line(chunk, [&](int64_t, std::string_view text) {
    if (first) fields = count_fields(text);
    first = false;
  });
  return fields;
}

std::vector<int64_t> read_edges_into(const std::string& path, int64_t n, int64_t m, int threads, size_t chunk,
                                     std::vector<int64_t>& dst) {
  check_plausible(path, m, 4, "num-edge-list");  // "0,1\n"
  std::vector<int64_t> src(static_cast<size_t>(m));
  dst.assign(static_cast<size_t>(m), 0);
  parse_rows(path, m, "num-edge-list", threads, chunk, [&](int64_t row, int64_t line, std::string_view text) {
    int64_t ids[2];
    CsvRowResult r = parse_csv_row<int64_t>(text, ids);
    DGCN_CHECK(r.ok(), "{}: line {}: {} {}", path, line, quote_value(text), describe_row_error(r, text, 2));
    for (int64_t id : ids) {
      DGCN_CHECK(id >= 0 && id < n, "{}: line {}: node id {} is not in [0, {}) (num-node-list)", path, line,
                 id, n);
    }
    src[row] = ids[0];
    dst[row] = ids[1];
  });
  return src;
}

Buffer read_features(const std::string& path, int64_t n, int64_t f, int threads, size_t chunk) {
  check_plausible(path, n, 2 * f, "num-node-list");  // at least "0," per value
  MutableBuffer features = Buffer::allocate(static_cast<size_t>(n * f) * sizeof(float));
  auto out = features.as_mutable<float>();
  parse_rows(path, n, "num-node-list", threads, chunk, [&](int64_t row, int64_t line, std::string_view text) {
    std::span<float> values = out.subspan(row * f, f);
    CsvRowResult r = parse_csv_row<float>(text, values);
    DGCN_CHECK(r.ok(), "{}: line {}: {} (line 1 has {} features)", path, line, describe_row_error(r, text, f),
               f);
    for (int64_t c = 0; c < f; ++c) {
      DGCN_CHECK(std::isfinite(values[c]), "{}: line {}: feature {} is {}, features must be finite", path,
                 line, c + 1, values[c]);
    }
  });
  return features;
}

// Labels as int32 (-1 for "nan"), by store_assembly.h's rule.
std::vector<int32_t> read_labels(const std::string& path, int64_t n, int64_t num_classes, int threads,
                                 size_t chunk) {
  check_plausible(path, n, 2, "num-node-list");
  std::vector<int32_t> labels(static_cast<size_t>(n));
  parse_rows(path, n, "num-node-list", threads, chunk, [&](int64_t row, int64_t line, std::string_view text) {
    DGCN_CHECK(text.find(',') == std::string_view::npos,
               "{}: line {}: {} has {} columns; only single-label (one column) label files are supported",
               path, line, quote_value(text), count_fields(text));
    int64_t label = 0;
    if (!parse_number(text, label)) {
      // Integral floats ("3.0") and NaN (unlabelled), as some OGB datasets store them.
      double d = 0;
      DGCN_CHECK(parse_number(text, d), "{}: line {}: label {} is not a number", path, line,
                 quote_value(text));
      DGCN_CHECK(
          std::isnan(d) || (d >= -1 && d < 2147483647.0 && d == std::floor(d)),
          "{}: line {}: label {} is not a class id (a non-negative integer, or nan or -1 for unlabelled)",
          path, line, quote_value(text));
      label = std::isnan(d) ? -1 : static_cast<int64_t>(d);
    }
    const std::string problem = label_problem(label, num_classes);
    DGCN_CHECK(problem.empty(), "{}: line {}: label {} is {}", path, line, label, problem);
    labels[row] = static_cast<int32_t>(label);
  });
  return labels;
}

// The one folder under DIR/split.
fs::path find_split_folder(const fs::path& root) {
  fs::path dir = root / "split";
  DGCN_CHECK(fs::is_directory(dir), "ogb: {} is missing (expected split/<name>/{{train,valid,test}}.csv.gz)",
             dir.string());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  DGCN_CHECK(!names.empty(), "ogb: {} holds no split folder", dir.string());
  DGCN_CHECK(names.size() == 1, "ogb: {} holds {} split folders ({}); keep the one to use", dir.string(),
             names.size(), fmt::join(names, ", "));
  return dir / names[0];
}

std::vector<int64_t> read_split(const fs::path& folder, const std::string& name, int64_t n) {
  std::string path = find_csv(folder, name, true);
  LineChunkReader reader(path);
  LineChunk chunk;
  std::vector<int64_t> ids;
  while (reader.next(chunk)) {
    for_each_line(chunk, [&](int64_t line, std::string_view text) {
      int64_t id = 0;
      DGCN_CHECK(parse_number(text, id), "{}: line {}: {} is not a node id", path, line, quote_value(text));
      DGCN_CHECK(id >= 0 && id < n, "{}: line {}: node id {} is not in [0, {}) (num-node-list)", path, line,
                 id, n);
      ids.push_back(id);
    });
  }
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  DGCN_CHECK(dup == ids.end(), "{}: node {} is listed twice", path, dup == ids.end() ? 0 : *dup);
  return ids;
}

}  // namespace

GraphStore read_ogb(const OgbOptions& options) {
  const fs::path root(options.root);
  const fs::path raw = root / "raw";
  DGCN_CHECK(fs::is_directory(raw), "ogb: {} is missing (expected the OGB layout DIR/raw/*.csv.gz)",
             raw.string());
  const int threads = resolve_threads(options.num_threads);
  const int64_t n = read_single_count(find_csv(raw, "num-node-list", true));
  const int64_t m = read_single_count(find_csv(raw, "num-edge-list", true));
  spdlog::info("ogb: {}: {} nodes, {} edges announced", root.string(), n, m);
  GraphStore store;
  nlohmann::json meta = {{"reader", "ogb"}, {"root", options.root}};

  // Features and labels first: the edge list is the largest array, and the
  // CSR build needs it only briefly.
  if (std::string feat = find_csv(raw, "node-feat", false); !feat.empty()) {
    store.num_features = first_line_fields(feat);
    DGCN_CHECK(store.num_features > 0 || n == 0, "{}: the first line is empty", feat);
    if (n > 0) store.features = read_features(feat, n, store.num_features, threads, options.chunk_bytes);
  }
  {
    std::string path = find_csv(raw, "node-label", true);
    std::vector<int32_t> labels = read_labels(path, n, options.num_classes, threads, options.chunk_bytes);
    set_single_labels(store, std::move(labels), options.num_classes, path);
  }
  const fs::path split = find_split_folder(root);
  Splits splits{read_split(split, "train", n), read_split(split, "valid", n), read_split(split, "test", n)};
  meta["split"] = split.filename().string();
  set_splits(store, std::move(splits));

  {
    std::vector<int64_t> dst;
    std::string path = find_csv(raw, "edge", true);
    std::vector<int64_t> src = read_edges_into(path, n, m, threads, options.chunk_bytes, dst);
    meta["edges"] = set_graph(store, n, std::move(src), std::move(dst), options.edges, threads, path);
  }
  meta["num_classes"] = store.num_classes;
  store.metadata_json = meta.dump();
  store.validate("ogb: " + options.root, threads);
  return store;
}

}  // namespace dgcn
