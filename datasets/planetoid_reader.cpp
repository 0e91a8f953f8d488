// See planetoid_reader.h; the steps follow torch_geometric/io/planetoid.py.
#include "datasets/planetoid_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/file_io.h"
#include "base/parallel.h"
#include "datasets/pickle.h"
#include "datasets/store_assembly.h"

namespace dgcn {
namespace {

namespace fs = std::filesystem;

// PyG's public split: 500 validation nodes after the training ones.
constexpr int64_t kValidNodes = 500;

std::vector<std::byte> read_bytes(const std::string& path) {
  UniqueFd fd = open_read(path);
  const FileStat st = stat_fd(fd.get(), path);
  std::vector<std::byte> bytes(st.size);
  pread_all(fd.get(), bytes.data(), bytes.size(), 0, path);
  return bytes;
}

struct Parts {
  detail::pickle::DenseMatrix x, tx, allx, y, ty, ally;
  std::vector<int64_t> src, dst;  // graph edges
  std::vector<int64_t> test_index;
};

detail::pickle::DenseMatrix read_matrix(const std::string& path, const std::string& field) {
  const std::vector<std::byte> bytes = read_bytes(path);
  const detail::pickle::Pickle p = detail::pickle::load(bytes, path);
  // A sparse matrix may be far larger dense than on disk, but not without bound.
  const uint64_t max_bytes =
      std::max<uint64_t>(uint64_t{64} << 20, 256 * static_cast<uint64_t>(bytes.size()));
  return detail::pickle::as_dense_matrix(p, p.root(), field, max_bytes);
}

void read_graph(const std::string& path, Parts& parts) {
  const std::vector<std::byte> bytes = read_bytes(path);
  const detail::pickle::Pickle p = detail::pickle::load(bytes, path);
  const detail::pickle::Value& dict = p.expect(p.root(), detail::pickle::Kind::kDict, "the graph");
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const int64_t u = p.as_int(dict.items[k], "a node id of the graph");
    const detail::pickle::Value& list = p.at(dict.items[k + 1]);
    DGCN_CHECK(list.kind == detail::pickle::Kind::kList || list.kind == detail::pickle::Kind::kTuple,
               "{}: the neighbours of node {} are a {}, expected a list", path, u,
               detail::pickle::kind_name(list.kind));
    for (detail::pickle::Ref r : list.items) {
      parts.src.push_back(u);
      parts.dst.push_back(p.as_int(r, fmt::format("a neighbour of node {}", u)));
    }
  }
}

std::vector<int64_t> read_test_index(const std::string& path) {
  const std::vector<std::byte> bytes = read_bytes(path);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::vector<int64_t> out;
  size_t line_no = 0, begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    ++line_no;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    if (!line.empty()) {
      int64_t v = -1;
      const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
      DGCN_CHECK(ec == std::errc() && ptr == line.data() + line.size() && v >= 0,
                 "{}: line {}: '{}' is not a node index", path, line_no, line.substr(0, 40));
      out.push_back(v);
    }
    begin = end + 1;
  }
  DGCN_CHECK(!out.empty(), "{}: no test node indices", path);
  return out;
}

// The class of every row of a one-hot matrix: its largest entry's column
// (the first on ties, as torch.max), -1 for an all-zero row.
std::vector<int32_t> classes_of(const detail::pickle::DenseMatrix& onehot) {
  std::vector<int32_t> out(static_cast<size_t>(onehot.rows), -1);
  for (int64_t r = 0; r < onehot.rows; ++r) {
    const float* row = onehot.values.data() + r * onehot.cols;
    const float* best = std::max_element(row, row + onehot.cols);
    if (onehot.cols > 0 && *best != 0.0f) out[static_cast<size_t>(r)] = static_cast<int32_t>(best - row);
  }
  return out;
}

}  // namespace

std::string planetoid_folder(const PlanetoidOptions& options) {
  std::string name = options.name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string file = "ind." + name + ".x";
  for (const fs::path& dir : {fs::path(options.root) / "raw", fs::path(options.root)}) {
    std::error_code ec;
    if (fs::is_regular_file(dir / file, ec)) return dir.string();
  }
  throw Error(fmt::format("planetoid: no {} in {} nor in {} (PyG's Planetoid keeps the files in DIR/raw/)",
                          file, (fs::path(options.root) / "raw").string(), options.root));
}

GraphStore read_planetoid(const PlanetoidOptions& options) {
  std::string name = options.name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  DGCN_CHECK(name == "cora" || name == "citeseer" || name == "pubmed",
             "planetoid: name '{}' is not one of cora, citeseer, pubmed", options.name);
  const int threads = resolve_threads(options.num_threads);
  const std::string dir = planetoid_folder(options);
  auto file = [&](const char* part) { return (fs::path(dir) / ("ind." + name + "." + part)).string(); };

  Parts parts;
  parts.x = read_matrix(file("x"), "x");
  parts.tx = read_matrix(file("tx"), "tx");
  parts.allx = read_matrix(file("allx"), "allx");
  parts.y = read_matrix(file("y"), "y");
  parts.ty = read_matrix(file("ty"), "ty");
  parts.ally = read_matrix(file("ally"), "ally");
  read_graph(file("graph"), parts);
  parts.test_index = read_test_index(file("test.index"));

  const std::string what = "planetoid " + dir + " (" + name + ")";
  const int64_t f = parts.allx.cols, c = parts.ally.cols, n_all = parts.allx.rows;
  DGCN_CHECK(parts.x.cols == f && parts.tx.cols == f,
             "{}: x, tx, allx have {}, {}, {} features; they must agree", what, parts.x.cols, parts.tx.cols,
             f);
  DGCN_CHECK(parts.y.cols == c && parts.ty.cols == c && c >= 1,
             "{}: y, ty, ally have {}, {}, {} classes; they must agree", what, parts.y.cols, parts.ty.cols,
             c);
  DGCN_CHECK(parts.ally.rows == n_all && parts.y.rows == parts.x.rows && parts.ty.rows == parts.tx.rows,
             "{}: rows of allx/ally {}/{}, x/y {}/{}, tx/ty {}/{} must agree", what, n_all, parts.ally.rows,
             parts.x.rows, parts.y.rows, parts.tx.rows, parts.ty.rows);
  const auto num_test = static_cast<int64_t>(parts.test_index.size());
  DGCN_CHECK(num_test == parts.tx.rows, "{}: test.index lists {} nodes, tx has {} rows", what, num_test,
             parts.tx.rows);
  const int64_t num_train = parts.y.rows;
  DGCN_CHECK(num_train + kValidNodes <= n_all,
             "{}: {} training + {} validation nodes exceed the {} rows of allx", what, num_train, kValidNodes,
             n_all);

  std::vector<int64_t> sorted = parts.test_index;
  std::sort(sorted.begin(), sorted.end());
  DGCN_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
             "{}: test.index repeats a node", what);
  detail::pickle::DenseMatrix tx = std::move(parts.tx), ty = std::move(parts.ty);
  if (name == "citeseer") {
    // Isolated test nodes have no row in tx/ty: extend both to every index
    // from the smallest to the largest, tx row k going to sorted[k] - min.
    const int64_t lo = sorted.front(), len = sorted.back() - lo + 1;
    DGCN_CHECK(len <= 4 * num_test + 1024, "{}: test indices span {} nodes for {} test rows", what, len,
               num_test);
    detail::pickle::DenseMatrix tx_ext{len, f, std::vector<float>(static_cast<size_t>(len * f), 0.0f)};
    detail::pickle::DenseMatrix ty_ext{len, c, std::vector<float>(static_cast<size_t>(len * c), 0.0f)};
    for (int64_t k = 0; k < num_test; ++k) {
      std::copy_n(tx.values.begin() + k * f, f, tx_ext.values.begin() + (sorted[k] - lo) * f);
      std::copy_n(ty.values.begin() + k * c, c, ty_ext.values.begin() + (sorted[k] - lo) * c);
    }
    tx = std::move(tx_ext);
    ty = std::move(ty_ext);
  }
  const int64_t n = n_all + tx.rows;
  DGCN_CHECK(sorted.front() >= 0 && sorted.back() < n, "{}: test indices {}..{} are not nodes in [0, {})",
             what, sorted.front(), sorted.back(), n);
  DGCN_CHECK(sorted.front() >= num_train + kValidNodes,
             "{}: test node {} lies in the train/valid range [0, {})", what, sorted.front(),
             num_train + kValidNodes);

  // x = cat(allx, tx), then x[test_index] = x[sorted_test_index] (and y alike).
  std::vector<float> features(static_cast<size_t>(n * f));
  std::copy(parts.allx.values.begin(), parts.allx.values.end(), features.begin());
  std::copy(tx.values.begin(), tx.values.end(), features.begin() + n_all * f);
  std::vector<int32_t> labels = classes_of(parts.ally);
  const std::vector<int32_t> test_labels = classes_of(ty);
  labels.insert(labels.end(), test_labels.begin(), test_labels.end());
  {
    std::vector<float> rows(static_cast<size_t>(num_test * f));
    std::vector<int32_t> row_labels(static_cast<size_t>(num_test));
    for (int64_t k = 0; k < num_test; ++k) {
      std::copy_n(features.begin() + sorted[k] * f, f, rows.begin() + k * f);
      row_labels[static_cast<size_t>(k)] = labels[static_cast<size_t>(sorted[k])];
    }
    for (int64_t k = 0; k < num_test; ++k) {
      std::copy_n(rows.begin() + k * f, f, features.begin() + parts.test_index[k] * f);
      labels[static_cast<size_t>(parts.test_index[k])] = row_labels[static_cast<size_t>(k)];
    }
  }

  GraphStore store;
  nlohmann::json meta = {
      {"reader", "planetoid"}, {"name", name}, {"root", options.root}, {"split", "public"}};
  meta["edges"] =
      set_graph(store, n, std::move(parts.src), std::move(parts.dst), options.edges, threads, file("graph"));
  store.num_features = f;
  store.features = Buffer::from_vector(std::move(features));
  store.task = Task::kSingleLabel;
  store.num_classes = c;
  store.labels = Buffer::from_vector(std::move(labels));
  Splits splits;
  for (int64_t v = 0; v < num_train; ++v) splits.train.push_back(v);
  for (int64_t v = num_train; v < num_train + kValidNodes; ++v) splits.valid.push_back(v);
  splits.test = sorted;
  set_splits(store, std::move(splits));
  meta["num_classes"] = c;
  store.metadata_json = meta.dump();
  spdlog::info("planetoid: {}: {} nodes, {} CSR entries, {} features, {} classes, train/valid/test {}/{}/{}",
               dir, n, store.num_edges(), f, c, num_train, kValidNodes, num_test);
  store.validate(what, threads);
  return store;
}

}  // namespace dgcn
