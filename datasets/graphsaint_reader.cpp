#include "datasets/graphsaint_reader.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "datasets/csv.h"
#include "datasets/npy.h"
#include "datasets/npz.h"
#include "datasets/sparse_matrix.h"
#include "datasets/store_assembly.h"

namespace dgcn {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// SAX events of class_map.json, written straight into the labels:
//   { "0": [0, 1, 0], "1": [1, 0, 0], ... }   multi-label (C = list length)
//   { "0": 3, "1": 0, ... }                   single-label
// Every node in [0, num_nodes) must appear exactly once.
class ClassMapHandler : public nlohmann::json_sax<Json> {
 public:
  ClassMapHandler(std::string path, int64_t num_nodes, int64_t num_classes)
      : path_(std::move(path)),
        n_(num_nodes),
        num_classes_(num_classes),
        seen_(static_cast<size_t>(num_nodes), 0) {}

  bool null() override { return unexpected("null"); }
  bool boolean(bool) override { return unexpected("a boolean"); }
  bool string(string_t& s) override { return unexpected("the string " + quote_value(s)); }
  bool binary(binary_t&) override { return unexpected("binary data"); }
  bool number_integer(number_integer_t v) override {
    return number(static_cast<double>(v), std::to_string(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    return number(static_cast<double>(v), std::to_string(v));
  }
  bool number_float(number_float_t v, const string_t& s) override { return number(v, s); }

  bool start_object(std::size_t) override {
    DGCN_CHECK(depth_ == 0, "{}: node {}: a value is an object, expected a class id or a list", path_, node_);
    depth_ = 1;
    return true;
  }
  bool key(string_t& k) override {
    int64_t id = 0;
    DGCN_CHECK(parse_number(std::string_view(k), id) && id >= 0 && id < n_,
               "{}: key {} is not a node id in [0, {}) (adj_full.npz has {} nodes)", path_, quote_value(k),
               n_, n_);
    DGCN_CHECK(!seen_[id], "{}: node {} appears twice", path_, id);
    seen_[id] = 1;
    node_ = id;
    return true;
  }
  bool end_object() override {
    depth_ = 0;
    return true;
  }
  bool start_array(std::size_t) override {
    DGCN_CHECK(depth_ == 1, "{}: node {}: nested list, expected a list of 0/1", path_, node_);
    set_mode(Mode::kMulti);
    depth_ = 2;
    row_.clear();
    return true;
  }
  bool end_array() override {
    depth_ = 1;
    if (classes_ == 0) {
      DGCN_CHECK(!row_.empty(), "{}: node {} has an empty class list", path_, node_);
      classes_ = static_cast<int64_t>(row_.size());
      bits_.assign(static_cast<size_t>(n_ * ((classes_ + 7) / 8)), 0);
    }
    DGCN_CHECK(static_cast<int64_t>(row_.size()) == classes_, "{}: node {} has {} classes, node {} has {}",
               path_, node_, row_.size(), first_node_, classes_);
    const int64_t row_bytes = (classes_ + 7) / 8;
    for (int64_t c = 0; c < classes_; ++c) {
      if (row_[c]) bits_[node_ * row_bytes + c / 8] |= static_cast<uint8_t>(1u << (c % 8));
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) override {
    throw Error(fmt::format("{}: invalid JSON at byte {} (near {}): {}", path_, position, quote_value(token),
                            e.what()));
  }

  // Moves the labels into `store`; every node must have had an entry.
  void finish(GraphStore& store) {
    DGCN_CHECK(mode_ != Mode::kUnknown, "{}: no node has a class entry", path_);
    auto missing = std::find(seen_.begin(), seen_.end(), 0);
    DGCN_CHECK(missing == seen_.end(), "{}: node {} has no entry ({} nodes)", path_, missing - seen_.begin(),
               n_);
    if (mode_ == Mode::kMulti) {
      store.task = Task::kMultiLabel;
      store.num_classes = classes_;
      store.labels = Buffer::from_vector(std::move(bits_));
    } else {
      set_single_labels(store, std::move(single_), num_classes_, path_);
    }
  }

 private:
  enum class Mode { kUnknown, kSingle, kMulti };

  bool unexpected(const std::string& what) {
    throw Error(
        fmt::format("{}: node {}: found {}, expected a class id or a list of 0/1", path_, node_, what));
  }
  void set_mode(Mode mode) {
    if (mode_ == Mode::kUnknown) {
      mode_ = mode;
      first_node_ = node_;
      if (mode == Mode::kSingle) single_.assign(static_cast<size_t>(n_), -1);
    }
    DGCN_CHECK(mode_ == mode, "{}: node {} has {} but node {} has {}; all entries must be of one kind", path_,
               node_, mode == Mode::kMulti ? "a class list" : "a single class", first_node_,
               mode_ == Mode::kMulti ? "a class list" : "a single class");
  }
  bool number(double v, const std::string& text) {
    DGCN_CHECK(depth_ >= 1, "{}: top level is a number, expected an object", path_);
    if (depth_ == 2) {
      DGCN_CHECK(v == 0 || v == 1, "{}: node {}: class {} is {}, expected 0 or 1 (multi-hot)", path_, node_,
                 row_.size(), text);
      row_.push_back(v == 1);
      return true;
    }
    set_mode(Mode::kSingle);
    DGCN_CHECK(v == std::floor(v) && v > -2147483648.0 && v < 2147483647.0,
               "{}: node {}: class {} is not a class id", path_, node_, text);
    const std::string problem = label_problem(static_cast<int64_t>(v), num_classes_);
    DGCN_CHECK(problem.empty(), "{}: node {}: class {} is {}", path_, node_, text, problem);
    single_[node_] = static_cast<int32_t>(v);
    return true;
  }

  std::string path_;
  int64_t n_;
  int64_t num_classes_;
  std::vector<uint8_t> seen_;
  Mode mode_ = Mode::kUnknown;
  int depth_ = 0;
  int64_t node_ = -1;
  int64_t first_node_ = -1;
  int64_t classes_ = 0;
  std::vector<uint8_t> row_;
  std::vector<uint8_t> bits_;
  std::vector<int32_t> single_;
};

std::vector<int64_t> role_ids(const Json& role, const char* key, const std::string& path, int64_t n) {
  DGCN_CHECK(role.contains(key) && role[key].is_array(), "{}: no '{}' list (expected keys tr, va, te)", path,
             key);
  std::vector<int64_t> ids;
  ids.reserve(role[key].size());
  for (const Json& v : role[key]) {
    DGCN_CHECK(v.is_number_integer(), "{}: '{}' holds {}, expected node ids", path, key, v.dump());
    int64_t id = v.get<int64_t>();
    DGCN_CHECK(id >= 0 && id < n, "{}: '{}' holds node id {}, not in [0, {})", path, key, id, n);
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  DGCN_CHECK(dup == ids.end(), "{}: '{}' lists node {} twice", path, key, dup == ids.end() ? 0 : *dup);
  return ids;
}

}  // namespace

void read_class_map(const std::string& path, int64_t num_nodes, int64_t num_classes, GraphStore& store) {
  // An istream: nlohmann reads it through the streambuf (inlined, buffered),
  // about 2x faster than its FILE* adapter's per-character fgetc.
  std::vector<char> buffer(size_t{1} << 20);
  std::ifstream in;
  in.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  in.open(path, std::ios::binary);
  DGCN_CHECK(in.is_open(), "{}: cannot open ({})", path, std::strerror(errno));
  ClassMapHandler handler(path, num_nodes, num_classes);
  Json::sax_parse(in, &handler);
  handler.finish(store);
}

GraphStore read_graphsaint(const GraphSaintOptions& options) {
  // PyG's dataset folder (AmazonProducts/ with raw/ inside) or raw/ itself.
  std::error_code ec;
  const fs::path root = !fs::exists(fs::path(options.root) / "adj_full.npz", ec) &&
                                fs::exists(fs::path(options.root) / "raw" / "adj_full.npz", ec)
                            ? fs::path(options.root) / "raw"
                            : fs::path(options.root);
  const int threads = resolve_threads(options.num_threads);
  GraphStore store;
  Json meta = {{"reader", "graphsaint"}, {"root", options.root}};

  const std::string adj_path = (root / "adj_full.npz").string();
  NpzArchive adj(adj_path);
  if (adj.contains("format")) {
    auto format = to_strings(adj.array("format"), adj_path + ": format");
    DGCN_CHECK(format.size() == 1 && format[0] == "csr", "{}: format is '{}', expected 'csr'", adj_path,
               format.empty() ? "" : format[0]);
  }
  SparseMatrix m = read_sparse_csr(adj, {"data", "indices", "indptr", "shape"}, false);
  DGCN_CHECK(m.rows == m.cols, "{}: shape ({}, {}) is not square", adj_path, m.rows, m.cols);
  const int64_t n = m.rows;
  spdlog::info("graphsaint: {}: {} nodes, {} stored entries", adj_path, n, m.nnz());
  {
    std::vector<int64_t> src = row_ids(m);
    std::vector<int64_t> dst = std::move(m.indices);
    m = SparseMatrix{};
    meta["edges"] = set_graph(store, n, std::move(src), std::move(dst), options.edges, threads, adj_path);
  }

  {
    const std::string path = (root / "feats.npy").string();
    NpyArray feats = read_npy_file(path);
    DGCN_CHECK(feats.shape().size() == 2 && feats.shape()[0] == n,
               "{}: shape {}, expected ({}, F) for {} nodes", path, feats.header.shape_string(), n, n);
    store.num_features = feats.shape()[1];
    store.features = to_float32(feats, path);
    auto f = store.features.as<float>();
    auto bad = std::find_if(f.begin(), f.end(), [](float x) { return !std::isfinite(x); });
    DGCN_CHECK(bad == f.end(), "{}: element [{}, {}] is {}, features must be finite", path,
               (bad - f.begin()) / std::max<int64_t>(1, store.num_features),
               (bad - f.begin()) % std::max<int64_t>(1, store.num_features), bad == f.end() ? 0.0f : *bad);
  }

  read_class_map((root / "class_map.json").string(), n, options.num_classes, store);
  spdlog::info("graphsaint: labels: {}, {} classes", task_name(store.task), store.num_classes);

  {
    const std::string path = (root / "role.json").string();
    std::ifstream in(path);
    DGCN_CHECK(in.good(), "{}: cannot open ({})", path, std::strerror(errno));
    Json role;
    try {
      role = Json::parse(in);
    } catch (const Json::exception& e) {
      throw Error(fmt::format("{}: invalid JSON: {}", path, e.what()));
    }
    DGCN_CHECK(role.is_object(), "{}: expected an object with tr, va, te", path);
    set_splits(store, Splits{role_ids(role, "tr", path, n), role_ids(role, "va", path, n),
                             role_ids(role, "te", path, n)});
  }
  meta["num_classes"] = store.num_classes;
  meta["task"] = task_name(store.task);
  store.metadata_json = meta.dump();
  store.validate("graphsaint: " + options.root, threads);
  return store;
}

}  // namespace dgcn
