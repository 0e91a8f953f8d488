#include "graph/graph_store.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/digest.h"
#include "base/parallel.h"

namespace dgcn {

const char* task_name(Task task) {
  switch (task) {
    case Task::kNone:
      return "none";
    case Task::kSingleLabel:
      return "single-label";
    case Task::kMultiLabel:
      return "multi-label";
  }
  return "unknown";
}

uint64_t GraphStore::bytes() const {
  uint64_t total = 0;
  for (const Buffer* b : {&graph.indptr_buffer(), &graph.indices_buffer(), &features, &labels, &train, &valid,
                          &test, &degree, &source_ids, &part.global_ids, &part.node_parts}) {
    total += b->size();
  }
  return total;
}

int64_t GraphPart::row_of(int64_t v) const {
  const auto g = ids();
  auto it = std::lower_bound(g.begin(), g.end(), v);
  return it != g.end() && *it == v ? it - g.begin() : -1;
}

namespace {

// Smallest index in [0, n) for which bad(i) holds, or -1; parallel, and the
// answer does not depend on the thread count.
template <class Pred>
int64_t first_where(int64_t n, int num_threads, Pred bad) {
  std::atomic<int64_t> first{INT64_MAX};
  parallel_for_chunks(n, int64_t{1} << 16, num_threads, [&](int64_t begin, int64_t end) {
    if (begin >= first.load(std::memory_order_relaxed)) return;
    for (int64_t i = begin; i < end; ++i) {
      if (bad(i)) {
        int64_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  int64_t f = first.load();
  return f == INT64_MAX ? -1 : f;
}

// A split's ids: in [0, num_ids), strictly increasing, each in one split
// only (owner[slot] is the split that claimed the node's slot so far). For a
// whole graph a node's slot is its id; for a part its row, and a node the
// part does not own is an error.
void check_split(const std::string& what, const char* name, std::span<const int64_t> ids, int64_t num_ids,
                 const GraphPart& part, std::vector<uint8_t>& owner, uint8_t tag) {
  for (size_t i = 0; i < ids.size(); ++i) {
    DGCN_CHECK(ids[i] >= 0 && ids[i] < num_ids, "{}: {}[{}] = {} is not a node id in [0, {})", what, name, i,
               ids[i], num_ids);
    DGCN_CHECK(i == 0 || ids[i - 1] < ids[i], "{}: {} is not strictly increasing at position {} ({} then {})",
               what, name, i, ids[i > 0 ? i - 1 : 0], ids[i]);
    const int64_t slot = part.is_part() ? part.row_of(ids[i]) : ids[i];
    DGCN_CHECK(slot >= 0, "{}: {} node {} belongs to part {}, not to this part ({} of {})", what, name,
               ids[i], part.owners()[ids[i]], part.index, part.count);
    static const char* names[] = {"", "train", "valid", "test"};
    DGCN_CHECK(owner[slot] == 0, "{}: node {} is in both {} and {}", what, ids[i], names[owner[slot]], name);
    owner[slot] = tag;
  }
}

// The part's own invariants: its ids, its owner map, and that the two agree
// (the part owns exactly the nodes its ids list).
void check_part(const GraphStore& s, const std::string& what, int num_threads) {
  const GraphPart& p = s.part;
  const int64_t n = s.num_nodes();
  if (!p.is_part()) {
    DGCN_CHECK(p.index == 0 && p.num_global_nodes == 0 && p.global_ids.empty() && p.node_parts.empty(),
               "{}: part fields are set (index {}, {} global nodes) but the part count is 0", what, p.index,
               p.num_global_nodes);
    DGCN_CHECK(s.graph.square(), "{}: a whole graph with {} rows over {} columns", what, n,
               s.graph.num_cols());
    return;
  }
  const int64_t total = p.num_global_nodes;
  DGCN_CHECK(p.count >= 1 && p.index >= 0 && p.index < p.count, "{}: part index {} of {} parts", what,
             p.index, p.count);
  DGCN_CHECK(total >= n && s.graph.num_cols() == total,
             "{}: a part of {} rows, {} CSR columns, of a graph of {} nodes", what, n, s.graph.num_cols(),
             total);
  DGCN_CHECK(p.global_ids.size() == static_cast<size_t>(n) * sizeof(int64_t),
             "{}: global_ids has {} bytes, expected {} int64 (one per row)", what, p.global_ids.size(), n);
  DGCN_CHECK(p.node_parts.size() == static_cast<size_t>(total) * sizeof(int32_t),
             "{}: node_parts has {} bytes, expected {} int32 (one per node of the whole graph)", what,
             p.node_parts.size(), total);
  const auto ids = p.ids();
  int64_t bad = first_where(n, num_threads, [&](int64_t i) {
    return ids[i] < 0 || ids[i] >= total || (i > 0 && ids[i - 1] >= ids[i]);
  });
  DGCN_CHECK(bad < 0, "{}: global_ids[{}] = {} is not in [0, {}) or not above the id before it", what, bad,
             bad < 0 ? 0 : ids[bad], total);
  const auto owners = p.owners();
  bad = first_where(total, num_threads, [&](int64_t v) { return owners[v] < 0 || owners[v] >= p.count; });
  DGCN_CHECK(bad < 0, "{}: node_parts[{}] = {} is not a part in [0, {})", what, bad,
             bad < 0 ? 0 : owners[bad], p.count);
  bad = first_where(n, num_threads, [&](int64_t i) { return owners[ids[i]] != p.index; });
  DGCN_CHECK(bad < 0, "{}: row {} holds node {}, which node_parts gives to part {}, not to this part {}",
             what, bad, bad < 0 ? 0 : ids[bad], bad < 0 ? 0 : owners[ids[bad]], p.index);
  const int64_t owned = std::count(owners.begin(), owners.end(), p.index);
  DGCN_CHECK(owned == n, "{}: node_parts gives {} nodes to part {}, but the part holds {} rows", what, owned,
             p.index, n);
}

}  // namespace

void GraphStore::validate(const std::string& what, int num_threads) const {
  const int64_t n = num_nodes();
  DGCN_CHECK(num_features >= 0, "{}: negative feature count {}", what, num_features);
  DGCN_CHECK(features.size() == static_cast<size_t>(n * num_features) * sizeof(float),
             "{}: features have {} bytes, expected {} x {} float32 = {}", what, features.size(), n,
             num_features, n * num_features * 4);
  if (num_features > 0) {
    auto f = features.as<float>();
    int64_t bad = first_where(static_cast<int64_t>(f.size()), num_threads,
                              [&](int64_t i) { return !std::isfinite(f[i]); });
    DGCN_CHECK(bad < 0, "{}: feature [node {}, column {}] is {}, features must be finite", what,
               bad / num_features, bad % num_features, bad < 0 ? 0.0f : f[bad]);
  }

  switch (task) {
    case Task::kNone:
      DGCN_CHECK(labels.empty() && num_classes == 0, "{}: task 'none' but labels are present", what);
      break;
    case Task::kSingleLabel: {
      DGCN_CHECK(num_classes >= 1, "{}: single-label task with {} classes", what, num_classes);
      DGCN_CHECK(labels.size() == static_cast<size_t>(n) * sizeof(int32_t),
                 "{}: labels have {} bytes, expected {} int32", what, labels.size(), n);
      auto l = labels.as<int32_t>();
      int64_t bad = first_where(n, num_threads, [&](int64_t v) { return l[v] < -1 || l[v] >= num_classes; });
      DGCN_CHECK(bad < 0, "{}: label of node {} is {}, expected a class in [0, {}) or -1 (unlabelled)", what,
                 bad, bad < 0 ? 0 : l[bad], num_classes);
      break;
    }
    case Task::kMultiLabel: {
      DGCN_CHECK(num_classes >= 1, "{}: multi-label task with {} classes", what, num_classes);
      DGCN_CHECK(labels.size() == static_cast<size_t>(n * label_row_bytes()),
                 "{}: labels have {} bytes, expected {} nodes x {} bytes", what, labels.size(), n,
                 label_row_bytes());
      if (num_classes % 8 != 0) {
        auto l = labels.as<uint8_t>();
        const int64_t row = label_row_bytes();
        const uint8_t spare = static_cast<uint8_t>(0xff << (num_classes % 8));
        int64_t bad =
            first_where(n, num_threads, [&](int64_t v) { return (l[v * row + row - 1] & spare) != 0; });
        DGCN_CHECK(bad < 0, "{}: node {} has a label bit set beyond class {}", what, bad, num_classes - 1);
      }
      break;
    }
    default:
      throw Error(fmt::format("{}: unknown task code {}", what, static_cast<int>(task)));
  }

  check_part(*this, what, num_threads);
  std::vector<uint8_t> owner(static_cast<size_t>(n), 0);
  const int64_t ids = num_global_nodes();
  check_split(what, "train", train.as<int64_t>(), ids, part, owner, 1);
  check_split(what, "valid", valid.as<int64_t>(), ids, part, owner, 2);
  check_split(what, "test", test.as<int64_t>(), ids, part, owner, 3);

  DGCN_CHECK(source_ids.empty() || source_ids.size() == static_cast<size_t>(n) * sizeof(int64_t),
             "{}: node_ids has {} entries, expected none or one per node ({})", what,
             source_ids.size() / sizeof(int64_t), n);
  if (!source_ids.empty()) {
    auto ids = source_ids.as<int64_t>();
    const int64_t neg = first_where(n, num_threads, [&](int64_t v) { return ids[v] < 0; });
    DGCN_CHECK(neg < 0, "{}: node_ids[{}] is {}, expected a source id >= 0", what, neg,
               neg < 0 ? 0 : ids[neg]);
  }
  DGCN_CHECK(degree.size() == static_cast<size_t>(n) * sizeof(int32_t),
             "{}: degree has {} bytes, expected {} int32", what, degree.size(), n);
  auto d = degree.as<int32_t>();
  auto p = graph.indptr();
  int64_t bad = first_where(n, num_threads, [&](int64_t v) { return d[v] != p[v + 1] - p[v]; });
  DGCN_CHECK(bad < 0, "{}: degree[{}] = {} but its CSR row has {} entries", what, bad, bad < 0 ? 0 : d[bad],
             bad < 0 ? 0 : p[bad + 1] - p[bad]);
}

Buffer gather_rows(const Buffer& array, size_t row_bytes, std::span<const int64_t> rows, int num_threads) {
  if (array.empty() || row_bytes == 0) return Buffer();
  MutableBuffer out = Buffer::allocate(rows.size() * row_bytes);
  std::byte* dst = out.as_mutable<std::byte>().data();
  const std::byte* src = array.data();
  parallel_for_chunks(static_cast<int64_t>(rows.size()), 1 << 12, num_threads,
                      [&](int64_t begin, int64_t end) {
                        for (int64_t i = begin; i < end; ++i)
                          std::memcpy(dst + i * row_bytes, src + rows[i] * row_bytes, row_bytes);
                      });
  return out;
}

void copy_node_rows(const GraphStore& from, std::span<const int64_t> rows, GraphStore& to, int num_threads) {
  to.num_features = from.num_features;
  to.features =
      gather_rows(from.features, static_cast<size_t>(from.num_features) * sizeof(float), rows, num_threads);
  to.task = from.task;
  to.num_classes = from.num_classes;
  to.labels = gather_rows(from.labels, static_cast<size_t>(from.label_bytes()), rows, num_threads);
  to.degree = gather_rows(from.degree, sizeof(int32_t), rows, num_threads);
}

Buffer degrees_of(const Csr& graph, int num_threads) {
  const int64_t n = graph.num_nodes();
  MutableBuffer out = Buffer::allocate(static_cast<size_t>(n) * sizeof(int32_t));
  auto d = out.as_mutable<int32_t>();
  auto p = graph.indptr();
  parallel_for(n, num_threads, [&](int64_t begin, int64_t end, int) {
    for (int64_t v = begin; v < end; ++v) {
      int64_t deg = p[v + 1] - p[v];
      DGCN_CHECK(deg <= INT32_MAX, "graph: node {} has degree {}, above the int32 limit", v, deg);
      d[v] = static_cast<int32_t>(deg);
    }
  });
  return out;
}

std::string content_digest(const GraphStore& s, int num_threads) {
  // Each array in fixed chunks hashed in parallel, then the chunk digests in
  // order: the result does not depend on the thread count.
  constexpr size_t kChunk = size_t{16} << 20;
  Digest digest;
  const int64_t scalars[] = {s.num_nodes(), s.num_edges(), s.num_features, s.num_classes,
                             static_cast<int64_t>(s.task)};
  digest.update(scalars, sizeof(scalars));
  std::vector<const Buffer*> arrays = {&s.graph.indptr_buffer(),
                                       &s.graph.indices_buffer(),
                                       &s.features,
                                       &s.labels,
                                       &s.train,
                                       &s.valid,
                                       &s.test};
  if (s.part.is_part()) {
    // Only parts hash these, so a whole graph's digest is what it always was.
    const int64_t part[] = {s.part.index, s.part.count, s.part.num_global_nodes};
    digest.update(part, sizeof(part));
    arrays.push_back(&s.part.global_ids);
    arrays.push_back(&s.part.node_parts);
  }
  for (const Buffer* b : arrays) {
    const size_t chunks = (b->size() + kChunk - 1) / kChunk;
    std::vector<uint64_t> parts(chunks);
    parallel_for_chunks(static_cast<int64_t>(chunks), 1, num_threads, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const size_t off = static_cast<size_t>(c) * kChunk;
        parts[static_cast<size_t>(c)] = hash_bytes(b->data() + off, std::min(kChunk, b->size() - off));
      }
    });
    const uint64_t size = b->size();
    digest.update_value(size);
    digest.update(parts.data(), parts.size() * sizeof(uint64_t));
  }
  return digest.hex();
}

}  // namespace dgcn
