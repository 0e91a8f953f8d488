#include "partition/partition.h"

#include <pthread.h>
#include <signal.h>

#ifdef DGCN_HAVE_METIS
#include <metis.h>
#endif

#include <algorithm>
#include <limits>
#include <numeric>

#include "base/error.h"
#include "base/parallel.h"
#include "base/random.h"
#include "graph/store_header.h"
#include "graph/symmetry.h"

namespace dgcn {

namespace {

// Separates the random split's stream from every other use of the seed.
constexpr uint64_t kPartitionStream = 0x9a27171077ULL;

#ifdef DGCN_HAVE_METIS
// The symmetric adjacency without self-loops, as METIS wants it.
struct MetisGraph {
  std::vector<idx_t> xadj, adjncy;
};

MetisGraph metis_graph(const GraphStore& whole, int threads) {
  const Csr undirected = undirected_csr(whole.graph, threads);
  const int64_t n = undirected.num_nodes();
  DGCN_CHECK(undirected.num_edges() <= std::numeric_limits<idx_t>::max(),
             "partition: {} CSR entries exceed METIS's 32-bit indices (this METIS is built with "
             "IDXTYPEWIDTH 32); use --method random",
             undirected.num_edges());
  MetisGraph g;
  g.xadj.resize(static_cast<size_t>(n) + 1);
  const auto ptr = undirected.indptr();
  undirected.visit_indices([&](auto indices) {
    g.adjncy.reserve(static_cast<size_t>(undirected.num_edges()));
    g.xadj[0] = 0;
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
        if (indices[e] != v) g.adjncy.push_back(static_cast<idx_t>(indices[e]));
      }
      g.xadj[static_cast<size_t>(v) + 1] = static_cast<idx_t>(g.adjncy.size());
    }
  });
  return g;
}

std::vector<int32_t> metis_parts(const GraphStore& whole, int parts, uint64_t seed, int threads) {
  const int64_t n = whole.num_nodes();
  DGCN_CHECK(n <= std::numeric_limits<idx_t>::max(), "partition: {} nodes exceed METIS's 32-bit indices", n);
  MetisGraph g = metis_graph(whole, threads);
  // Vertex weights, three per node (Note in partition.h): 1, is-train, degree.
  // A constraint with no weight at all (no training nodes) is left out:
  // METIS cannot balance a total of zero.
  const bool has_train = !whole.train_nodes().empty();
  idx_t ncon = has_train ? 3 : 2;
  std::vector<idx_t> vwgt(static_cast<size_t>(n) * ncon);
  std::vector<uint8_t> is_train(static_cast<size_t>(n), 0);
  for (int64_t v : whole.train_nodes()) is_train[static_cast<size_t>(v)] = 1;
  const auto degree = whole.degrees();
  for (int64_t v = 0; v < n; ++v) {
    idx_t* w = vwgt.data() + v * ncon;
    w[0] = 1;
    if (has_train) w[1] = is_train[static_cast<size_t>(v)];
    // At least 1: a zero-weight constraint entry is fine for METIS, but an
    // isolated node should still count somewhere besides the node count.
    w[ncon - 1] = std::max<idx_t>(1, degree[static_cast<size_t>(v)]);
  }
  idx_t nvtxs = static_cast<idx_t>(n);
  idx_t nparts = parts;
  idx_t objval = 0;
  std::vector<idx_t> part(static_cast<size_t>(n), 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
  options[METIS_OPTION_NUMBERING] = 0;
  int rc = 0;
  {
    // METIS (GKlib's gk_sigtrap) swaps in its own SIGTERM handler while it
    // runs and turns a SIGTERM into METIS_ERROR by a longjmp: a user's stop
    // would read as "METIS failed", with exit status 1, and the process's own
    // handler (base/atomic_file.h: remove the temporaries, say so) would not
    // run. Held back here, the signal stays pending until METIS has put that
    // handler back, and is handled then. (This is the only thread while METIS
    // runs: base/parallel's threads are joined inside each call.)
    sigset_t term, before;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &before);
    rc = METIS_PartGraphKway(&nvtxs, &ncon, g.xadj.data(), g.adjncy.data(), vwgt.data(), nullptr, nullptr,
                             &nparts, nullptr, nullptr, options, &objval, part.data());
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
  }
  DGCN_CHECK(rc == METIS_OK, "partition: METIS_PartGraphKway failed ({})",
             rc == METIS_ERROR_MEMORY  ? "out of memory"
             : rc == METIS_ERROR_INPUT ? "input error"
                                       : "error");
  return std::vector<int32_t>(part.begin(), part.end());
}

#else
std::vector<int32_t> metis_parts(const GraphStore&, int, uint64_t, int) {
  throw Error(
      "partition: this build of dgcn has no METIS (install libmetis-dev and rebuild); --method random works");
}
#endif

std::vector<int32_t> random_parts(int64_t n, int parts, uint64_t seed) {
  // A Fisher-Yates shuffle of the ids with our own generator (the same order
  // with every standard library), cut into `parts` slices of n/parts nodes.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng(stream_key(seed, {kPartitionStream}));
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>(rng.below(static_cast<uint64_t>(i + 1)))]);
  }
  std::vector<int32_t> owner(static_cast<size_t>(n));
  for (int p = 0; p < parts; ++p) {
    for (int64_t i = n * p / parts; i < n * (p + 1) / parts; ++i) owner[static_cast<size_t>(order[i])] = p;
  }
  return owner;
}

double balance_of(const std::vector<int64_t>& weights) {
  const int64_t total = std::accumulate(weights.begin(), weights.end(), int64_t{0});
  if (total == 0) return 1.0;
  const double mean = static_cast<double>(total) / static_cast<double>(weights.size());
  return static_cast<double>(*std::max_element(weights.begin(), weights.end())) / mean;
}

}  // namespace

const char* partition_method_name(PartitionMethod m) {
  return m == PartitionMethod::kMetis ? "metis" : "random";
}

PartitionMethod parse_partition_method(const std::string& s) {
  if (s == "metis") return PartitionMethod::kMetis;
  if (s == "random") return PartitionMethod::kRandom;
  throw Error(fmt::format("partition: method '{}' is unknown (choose metis or random)", s));
}

std::vector<int32_t> assign_parts(const GraphStore& whole, const PartitionOptions& o) {
  DGCN_CHECK(!whole.part.is_part(),
             "partition: the store is already part {} of {}; partition the whole graph", whole.part.index,
             whole.part.count);
  DGCN_CHECK(o.parts >= 1 && o.parts <= detail::kMaxParts, "partition: {} parts, expected 1 to {}", o.parts,
             detail::kMaxParts);
  const int64_t n = whole.num_nodes();
  DGCN_CHECK(n >= o.parts, "partition: {} parts for a graph of {} nodes; every part needs a node", o.parts,
             n);
  if (o.parts == 1) return std::vector<int32_t>(static_cast<size_t>(n), 0);
  std::vector<int32_t> owner = o.method == PartitionMethod::kMetis
                                   ? metis_parts(whole, o.parts, o.seed, resolve_threads(o.threads))
                                   : random_parts(n, o.parts, o.seed);
  // METIS may leave a part empty on a graph too small or too disconnected
  // for the count asked; a rank with no nodes could not train.
  std::vector<int64_t> sizes(static_cast<size_t>(o.parts), 0);
  for (int32_t p : owner) ++sizes[static_cast<size_t>(p)];
  for (int p = 0; p < o.parts; ++p) {
    DGCN_CHECK(sizes[static_cast<size_t>(p)] > 0,
               "partition: {} left part {} of {} empty on this graph of {} nodes; ask for fewer parts or use "
               "--method random",
               partition_method_name(o.method), p, o.parts, n);
  }
  return owner;
}

PartitionQuality partition_quality(const GraphStore& whole, std::span<const int32_t> owner, int parts,
                                   int threads) {
  const int64_t n = whole.num_nodes();
  DGCN_CHECK(static_cast<int64_t>(owner.size()) == n, "partition quality: {} owners for {} nodes",
             owner.size(), n);
  PartitionQuality q;
  q.nodes.assign(static_cast<size_t>(parts), 0);
  q.train_nodes.assign(static_cast<size_t>(parts), 0);
  q.entries.assign(static_cast<size_t>(parts), 0);
  const auto ptr = whole.graph.indptr();
  for (int64_t v = 0; v < n; ++v) {
    const auto p = static_cast<size_t>(owner[static_cast<size_t>(v)]);
    ++q.nodes[p];
    q.entries[p] += ptr[v + 1] - ptr[v];
  }
  for (int64_t v : whole.train_nodes()) ++q.train_nodes[static_cast<size_t>(owner[static_cast<size_t>(v)])];
  const int t = resolve_threads(threads);
  std::vector<int64_t> cut(static_cast<size_t>(t), 0);
  whole.graph.visit_indices([&](auto indices) {
    parallel_for(n, t, [&](int64_t begin, int64_t end, int thread) {
      int64_t c = 0;
      for (int64_t v = begin; v < end; ++v) {
        const int32_t pv = owner[static_cast<size_t>(v)];
        for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) c += owner[static_cast<size_t>(indices[e])] != pv;
      }
      cut[static_cast<size_t>(thread)] += c;
    });
  });
  q.cut_entries = std::accumulate(cut.begin(), cut.end(), int64_t{0});
  q.cut_fraction = whole.num_edges() > 0
                       ? static_cast<double>(q.cut_entries) / static_cast<double>(whole.num_edges())
                       : 0.0;
  q.node_balance = balance_of(q.nodes);
  q.train_balance = balance_of(q.train_nodes);
  q.entry_balance = balance_of(q.entries);
  return q;
}

namespace {

// The ids of `split` that part `index` owns, in order.
Buffer owned_split(std::span<const int64_t> split, std::span<const int32_t> owner, int index) {
  std::vector<int64_t> out;
  for (int64_t v : split)
    if (owner[static_cast<size_t>(v)] == index) out.push_back(v);
  return Buffer::from_vector(std::move(out));
}

template <class Id>
Csr part_rows(const Csr& g, std::span<const Id> indices, std::span<const int64_t> rows,
              const std::string& what) {
  const auto ptr = g.indptr();
  std::vector<int64_t> indptr(rows.size() + 1, 0);
  for (size_t i = 0; i < rows.size(); ++i) indptr[i + 1] = indptr[i] + (ptr[rows[i] + 1] - ptr[rows[i]]);
  std::vector<Id> out(static_cast<size_t>(indptr.back()));
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy(indices.begin() + ptr[rows[i]], indices.begin() + ptr[rows[i] + 1], out.begin() + indptr[i]);
  }
  return Csr(static_cast<int64_t>(rows.size()), g.num_nodes(), Buffer::from_vector(std::move(indptr)),
             Buffer::from_vector(std::move(out)), id_width_of<Id>(), what);
}

}  // namespace

GraphStore extract_part(const GraphStore& whole, const Buffer& owner_buffer, int index, int count,
                        const std::string& metadata_json, int threads) {
  const int t = resolve_threads(threads);
  const auto owner = owner_buffer.as<int32_t>();
  const int64_t n = whole.num_nodes();
  DGCN_CHECK(static_cast<int64_t>(owner.size()) == n, "extract_part: {} owners for {} nodes", owner.size(),
             n);
  DGCN_CHECK(index >= 0 && index < count, "extract_part: part {} of {}", index, count);
  std::vector<int64_t> rows;
  for (int64_t v = 0; v < n; ++v)
    if (owner[static_cast<size_t>(v)] == index) rows.push_back(v);
  const std::string what = fmt::format("part {} of {}", index, count);

  GraphStore part;
  part.graph =
      whole.graph.visit_indices([&](auto indices) { return part_rows(whole.graph, indices, rows, what); });
  copy_node_rows(whole, rows, part, t);
  part.train = owned_split(whole.train_nodes(), owner, index);
  part.valid = owned_split(whole.valid_nodes(), owner, index);
  part.test = owned_split(whole.test_nodes(), owner, index);
  part.source_ids = gather_rows(whole.source_ids, sizeof(int64_t), rows, t);
  part.part.index = index;
  part.part.count = count;
  part.part.num_global_nodes = n;
  part.part.global_ids = Buffer::from_vector(std::move(rows));
  part.part.node_parts = owner_buffer;
  part.metadata_json = metadata_json;
  return part;
}

}  // namespace dgcn
