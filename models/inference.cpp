#include "models/inference.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include "base/error.h"
#include "models/batch_tensors.h"
#include "models/gcn.h"
#include "partition/owner_exchange.h"

namespace dgcn {
namespace {

// Puts a module in eval mode and restores its mode on every exit path.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(torch::nn::Module& m) : m_(m), was_training_(m.is_training()) { m_.eval(); }
  ~EvalModeGuard() { m_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::nn::Module& m_;
  bool was_training_;
};

// The feature dtypes inference reads (Note [Mixed precision] in models/gcn.h).
bool float_or_bf16(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16;
}

// rows ∪ neighbours(rows), sorted (rows sorted, without repeats).
std::vector<int64_t> with_neighbours(const Csr& graph, const std::vector<int64_t>& rows) {
  // Every node already (evaluating most of a graph, e.g. products' test
  // split): nothing to add, and no pass over the edges.
  if (static_cast<int64_t>(rows.size()) == graph.num_nodes()) return rows;
  std::vector<uint8_t> mark(static_cast<size_t>(graph.num_nodes()), 0);
  const auto ptr = graph.indptr();
  graph.visit_indices([&](auto indices) {
    for (int64_t v : rows) {
      mark[static_cast<size_t>(v)] = 1;
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) mark[static_cast<size_t>(indices[e])] = 1;
    }
  });
  std::vector<int64_t> out;
  for (int64_t v = 0; v < graph.num_nodes(); ++v) {
    if (mark[static_cast<size_t>(v)]) out.push_back(v);
  }
  return out;
}

// Layer l of `model` for `rows` rows, computed in chunks of
// options.chunk_rows: adjacency(begin, len) gives the GCN-normalized rows
// [begin, begin + len) on the CPU with columns = rows of h (their nnz sum to
// `nnz`; each row's self loop, its own column, first). Returns the activated
// output [rows x out_features], written into `into` when given (rows x
// out_features, e.g. the first rows of a larger buffer).
at::Tensor layer_in_chunks(GnnModel& model, int64_t l, const at::Tensor& h, size_t rows, int64_t nnz,
                           const InferenceOptions& options,
                           const std::function<CsrTensor(int64_t, int64_t)>& adjacency,
                           at::Tensor into = {}) {
  const auto n = static_cast<int64_t>(rows);
  auto* gcn = dynamic_cast<GcnImpl*>(&model);
  if (gcn == nullptr) {
    // Each chunk as a sampled block: its rows first, then the neighbours they read.
    at::Tensor next = into.defined() ? into : at::empty({n, model.layer_out_features(l)}, h.options());
    // The chunks' gathered rows go into one buffer, grown when a chunk reads
    // more rows: a fresh tensor per chunk, a different size each time, left
    // the CPU allocator's cache a block per chunk, up to its cap (~3 GB of
    // peak RSS on products; docs/training.md).
    at::Tensor gathered;
    for (int64_t begin = 0; begin < n; begin += options.chunk_rows) {
      const int64_t len = std::min<int64_t>(options.chunk_rows, n - begin);
      ChunkBlock c = chunk_block(adjacency(begin, len));
      const CsrTensor a = adjacency_for(c.block, model.adjacency_values()).to(options.device);
      const int64_t k = c.rows.numel();
      if (!gathered.defined() || gathered.size(0) < k) {
        gathered = at::Tensor();  // freed before its successor is allocated
        gathered = at::empty({k + k / 8, h.size(1)}, h.options());
      }
      at::Tensor x = gathered.narrow(0, 0, k);
      at::index_select_out(x, h, 0, c.rows.to(h.device()));
      next.narrow(0, begin, len).copy_(model.layer(l, a, x));
    }
    return next;
  }
  GCNConv& conv = gcn->conv(l);
  const AggregationOrder order =
      choose_aggregation_order(n, h.size(0), nnz, conv->in_features(), conv->out_features(), false, false);
  const at::Tensor src = order == AggregationOrder::kTransformFirst ? conv->transform(h) : h;
  at::Tensor next = into.defined() ? into : at::empty({n, conv->out_features()}, h.options());
  for (int64_t begin = 0; begin < n; begin += options.chunk_rows) {
    const int64_t len = std::min<int64_t>(options.chunk_rows, n - begin);
    const CsrTensor a = adjacency(begin, len).to(options.device);
    const at::Tensor y = order == AggregationOrder::kTransformFirst
                             ? conv->add_bias(conv->aggregate(a, src))
                             : conv->forward_with(a, src, AggregationOrder::kAggregateFirst);
    next.narrow(0, begin, len).copy_(gcn->activate(l, y));
  }
  return next;
}

}  // namespace

at::Tensor full_neighbour_logits(GnnModel& model, const GraphStore& store, const at::Tensor& features,
                                 std::span<const int64_t> nodes, const InferenceOptions& options) {
  return full_neighbour_outputs(model, store, features, nodes, options, 0).logits;
}

InferenceOutputs full_neighbour_outputs(GnnModel& model, const GraphStore& store, const at::Tensor& features,
                                        std::span<const int64_t> nodes, const InferenceOptions& options,
                                        int64_t embedding_layer) {
  require_whole_graph(store.graph, "inference");
  const int64_t n = store.num_nodes();
  const int64_t layers = model.num_layers();
  TORCH_CHECK(features.dim() == 2 && features.size(0) == n && features.size(1) == model.in_features() &&
                  float_or_bf16(features),
              "inference: features must be float32 or bfloat16 [", n, " x ", model.in_features(), "] (got ",
              features.sizes(), ", ", features.scalar_type(), ")");
  TORCH_CHECK(options.chunk_rows >= 1, "inference: chunk_rows must be positive (got ", options.chunk_rows,
              ")");
  TORCH_CHECK(embedding_layer >= 0 && embedding_layer <= layers, "inference: no layer ", embedding_layer,
              " to take embeddings from (the model has ", layers, ")");
  torch::NoGradGuard no_grad;
  EvalModeGuard eval(model);

  // rows[l]: the nodes layer l is computed for, sorted.
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(layers));
  rows.back().assign(nodes.begin(), nodes.end());
  for (int64_t v : rows.back())
    TORCH_CHECK(v >= 0 && v < n, "inference: node ", v, " is not in [0, ", n, ")");
  std::sort(rows.back().begin(), rows.back().end());
  rows.back().erase(std::unique(rows.back().begin(), rows.back().end()), rows.back().end());
  for (int64_t l = layers - 1; l > 0; --l) {
    rows[static_cast<size_t>(l - 1)] = with_neighbours(store.graph, rows[static_cast<size_t>(l)]);
  }

  // h: the previous layer's output, row position[v] for node v (layer 0
  // reads the features, whose rows are the node ids: not compact).
  at::Tensor h = features.to(options.device);
  bool compact = false;
  bool every_node = false;        // h holds every node, row v = node v
  at::Tensor embeddings;          // layer embedding_layer's output at `nodes`
  std::vector<int32_t> position;  // node -> row of h, -1 when absent
  for (int64_t l = 0; l < layers; ++l) {
    const std::vector<int64_t>& r = rows[static_cast<size_t>(l)];
    h = layer_in_chunks(
        model, l, h, r.size(), full_rows_nnz(store.graph, r), options, [&](int64_t begin, int64_t len) {
          CsrTensor adj = full_rows_adjacency(
              store.graph, store.degrees(),
              std::span<const int64_t>(r).subspan(static_cast<size_t>(begin), static_cast<size_t>(len)));
          if (compact && !every_node) {
            // Global ids -> rows of h (every neighbour of a row of layer l is a row of layer l-1).
            // When layer l-1 ran for every node, row v of h is node v: nothing to renumber.
            int32_t* idx = adj.indices.data_ptr<int32_t>();
            at::parallel_for(0, adj.nnz(), int64_t{1} << 16, [&](int64_t e0, int64_t e1) {
              for (int64_t e = e0; e < e1; ++e) {
                idx[e] = position[static_cast<size_t>(idx[e])];
                DGCN_ASSERT(idx[e] >= 0);
              }
            });
            adj.num_cols = h.size(0);
          }
          return adj;
        });
    position.assign(static_cast<size_t>(n), -1);
    for (size_t i = 0; i < r.size(); ++i) position[static_cast<size_t>(r[i])] = static_cast<int32_t>(i);
    compact = true;
    every_node = static_cast<int64_t>(r.size()) == n;  // r is sorted without repeats: position[v] == v
    if (l + 1 == embedding_layer && embedding_layer < layers) {
      // Layer l's rows hold every target node (each layer's rows include the next's).
      std::vector<int64_t> pick(nodes.size());
      for (size_t i = 0; i < nodes.size(); ++i) pick[i] = position[static_cast<size_t>(nodes[i])];
      embeddings = h.index_select(0, torch::tensor(pick, torch::kLong).to(h.device()));
    }
  }
  InferenceOutputs out;
  std::vector<int64_t> pick(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) pick[i] = position[static_cast<size_t>(nodes[i])];
  const at::Tensor rows_of_nodes = torch::tensor(pick, torch::kLong).to(h.device());
  out.logits = model.head(h).index_select(0, rows_of_nodes);
  if (embedding_layer == layers) out.embeddings = h.index_select(0, rows_of_nodes);
  if (embedding_layer > 0 && embedding_layer < layers) out.embeddings = embeddings;
  if (out.embeddings.defined()) out.embeddings = out.embeddings.to(at::kFloat);  // bf16 layers
  return out;
}

namespace {

// Node ids -> rows of `index_of`-numbered tensors, checked.
at::Tensor rows_of(std::span<const int64_t> nodes, const std::function<int64_t(int64_t)>& row,
                   c10::Device device) {
  std::vector<int64_t> pick(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) pick[i] = row(nodes[i]);
  return torch::tensor(pick, torch::kLong).to(device);
}

// The partitioned graph's halo: the neighbours of this part's rows that
// other parts own, ordered by (owner, id), and what every peer needs of ours.
struct Halo {
  std::vector<int64_t> ids;                 // by (owner, id)
  std::vector<int64_t> owner_begin;         // ids of owner q: [owner_begin[q], owner_begin[q+1])
  std::vector<std::vector<int64_t>> serve;  // serve[q]: our rows rank q needs, in its halo order
  std::vector<int32_t> degrees;             // full-graph degree of each halo node
};

Halo find_halo(const GraphStore& part, const PartMap& map, Collectives& comm) {
  const int self = comm.rank(), w = comm.size();
  Halo halo;
  part.graph.visit_indices([&](auto indices) {
    for (auto u : indices)
      if (map.owner(u) != self) halo.ids.push_back(u);
  });
  std::sort(halo.ids.begin(), halo.ids.end(), [&](int64_t a, int64_t b) {
    return std::make_pair(map.owner(a), a) < std::make_pair(map.owner(b), b);
  });
  halo.ids.erase(std::unique(halo.ids.begin(), halo.ids.end()), halo.ids.end());
  halo.owner_begin.assign(static_cast<size_t>(w) + 1, 0);
  for (int64_t u : halo.ids) ++halo.owner_begin[static_cast<size_t>(map.owner(u)) + 1];
  for (int q = 0; q < w; ++q)
    halo.owner_begin[static_cast<size_t>(q) + 1] += halo.owner_begin[static_cast<size_t>(q)];

  // Ids to their owners (Note [Asking the owners]); each owner answers with
  // their degrees and keeps which of its rows each peer needs.
  OwnerGroups groups;
  groups.group(halo.ids, map);
  OwnerRoundTrip trip(comm, map, "partitioned inference: a halo request");
  const auto degree = part.degrees();
  halo.serve.resize(static_cast<size_t>(w));
  trip.run({}, groups, /*ask_self=*/false,
           [&](int peer, std::span<const int64_t>, std::span<const int64_t> ids, Messages& answers) {
             std::vector<int32_t> degrees;
             for (int64_t v : ids) {
               halo.serve[static_cast<size_t>(peer)].push_back(map.row(v));
               degrees.push_back(degree[static_cast<size_t>(map.row(v))]);
             }
             answers.append(std::span<const int32_t>(degrees));
           });
  for (int q = 0; q < w; ++q) {
    MessageReader r(trip.answer(q), "partitioned inference: a degree answer");
    const auto d = r.take<int32_t>(groups.of(q).size());
    halo.degrees.insert(halo.degrees.end(), d.begin(), d.end());
  }
  return halo;
}

// The part's rows with local columns: column j < n is the part's row j,
// column n + k is halo node k.
Csr local_rows(const GraphStore& part, const PartMap& map, const Halo& halo) {
  const int64_t n = part.num_nodes();
  std::vector<int32_t> column(static_cast<size_t>(map.num_nodes()), -1);
  for (int64_t i = 0; i < n; ++i)
    column[static_cast<size_t>(part.part.ids()[static_cast<size_t>(i)])] = static_cast<int32_t>(i);
  for (size_t k = 0; k < halo.ids.size(); ++k)
    column[static_cast<size_t>(halo.ids[k])] = static_cast<int32_t>(n + static_cast<int64_t>(k));
  std::vector<int32_t> local(static_cast<size_t>(part.num_edges()));
  part.graph.visit_indices([&](auto indices) {
    for (size_t e = 0; e < local.size(); ++e) local[e] = column[static_cast<size_t>(indices[e])];
  });
  return Csr(n, n + static_cast<int64_t>(halo.ids.size()), part.graph.indptr_buffer(),
             Buffer::from_vector(std::move(local)), IdWidth::k32, "partitioned inference: local rows");
}

// Fills rows [n, n + halo) of x with the halo's rows of rows [0, n) of
// every part's x (each owner sends the rows its peers need, gathered
// straight into the message), in halo order.
void fill_halo_rows(at::Tensor& x, int64_t n, const Halo& halo, Collectives& comm) {
  const int w = comm.size();
  const int64_t d = x.size(1);
  const at::Tensor own = x.narrow(0, 0, n).cpu();  // a view on the CPU
  Messages send, received;
  for (int q = 0; q < w; ++q) {
    const auto& serve = halo.serve[static_cast<size_t>(q)];
    send.append_value<int64_t>(static_cast<int64_t>(serve.size()));
    const size_t at = send.bytes.size();
    send.bytes.resize(at + serve.size() * static_cast<size_t>(d) * x.element_size());
    at::Tensor rows =
        at::from_blob(send.bytes.data() + at, {static_cast<int64_t>(serve.size()), d}, x.scalar_type());
    at::index_select_out(rows, own, 0, torch::tensor(serve, torch::kLong));
    send.end_message();
  }
  comm.exchange(send, received);
  at::Tensor rows = x.narrow(0, n, static_cast<int64_t>(halo.ids.size()));
  for (int q = 0; q < w; ++q) {
    MessageReader r(received.of(q), "partitioned inference: halo rows");
    const int64_t m = halo.owner_begin[static_cast<size_t>(q) + 1] - halo.owner_begin[static_cast<size_t>(q)];
    DGCN_CHECK(r.value<int64_t>() == m,
               "partitioned inference: rank {} sent another number of rows than asked", q);
    // The rows' bytes, in x's dtype (fp32, or bf16 under Note [Mixed precision]).
    const auto got = r.take<std::byte>(static_cast<size_t>(m * d) * x.element_size());
    rows.narrow(0, halo.owner_begin[static_cast<size_t>(q)], m)
        .copy_(at::from_blob(const_cast<std::byte*>(got.data()), {m, d}, x.scalar_type()));
  }
}

}  // namespace

InferenceOutputs partitioned_full_neighbour_outputs(GnnModel& model, const GraphStore& part,
                                                    const PartMap& map, Collectives& comm,
                                                    const at::Tensor& features,
                                                    std::span<const int64_t> nodes,
                                                    const InferenceOptions& options,
                                                    int64_t embedding_layer) {
  const int64_t n = part.num_nodes();
  const int64_t layers = model.num_layers();
  TORCH_CHECK(part.part.is_part() && comm.rank() == part.part.index && comm.size() == part.part.count,
              "partitioned inference: rank ", comm.rank(), " of ", comm.size(),
              " must hold its own part (it holds part ", part.part.index, " of ", part.part.count, ")");
  TORCH_CHECK(features.dim() == 2 && features.size(0) == n && features.size(1) == model.in_features() &&
                  float_or_bf16(features),
              "partitioned inference: features must be float32 or bfloat16 [", n, " x ", model.in_features(),
              "] (got ", features.sizes(), ", ", features.scalar_type(), ")");
  TORCH_CHECK(options.chunk_rows >= 1, "inference: chunk_rows must be positive (got ", options.chunk_rows,
              ")");
  TORCH_CHECK(embedding_layer >= 0 && embedding_layer <= layers, "inference: no layer ", embedding_layer,
              " to take embeddings from (the model has ", layers, ")");
  for (int64_t v : nodes) {
    TORCH_CHECK(v >= 0 && v < map.num_nodes() && map.owner(v) == comm.rank(), "partitioned inference: node ",
                v, " is not one of part ", comm.rank(), "'s nodes");
  }
  torch::NoGradGuard no_grad;
  EvalModeGuard eval(model);
  const Halo halo = find_halo(part, map, comm);
  const Csr local = local_rows(part, map, halo);
  std::vector<int32_t> degree(part.degrees().begin(), part.degrees().end());
  degree.insert(degree.end(), halo.degrees.begin(), halo.degrees.end());
  std::vector<int64_t> all_rows(static_cast<size_t>(n));
  std::iota(all_rows.begin(), all_rows.end(), int64_t{0});

  // Every layer for every row of the part. A layer's input x holds this
  // part's rows of the layer before, then the halo's, fetched from their
  // owners; each layer writes its rows straight into the next one's x.
  const auto row_in_part = [&](int64_t v) { return map.row(v); };
  const auto halo_size = static_cast<int64_t>(halo.ids.size());
  at::Tensor x = at::empty({n + halo_size, features.size(1)},
                           features.options().device(options.device).dtype(model.layer_dtype(0)));
  x.narrow(0, 0, n).copy_(features);
  InferenceOutputs out;
  for (int64_t l = 0; l < layers; ++l) {
    fill_halo_rows(x, n, halo, comm);
    at::Tensor next = at::empty({n + (l + 1 < layers ? halo_size : 0), model.layer_out_features(l)},
                                x.options().dtype(model.layer_dtype(l)));
    layer_in_chunks(
        model, l, x, all_rows.size(), local.num_edges() + n, options,
        [&](int64_t begin, int64_t len) {
          return full_rows_adjacency(local, degree,
                                     std::span<const int64_t>(all_rows).subspan(static_cast<size_t>(begin),
                                                                                static_cast<size_t>(len)));
        },
        next.narrow(0, 0, n));
    x = next;
    if (l + 1 == embedding_layer) {
      out.embeddings =
          x.narrow(0, 0, n).index_select(0, rows_of(nodes, row_in_part, x.device())).to(at::kFloat);
    }
  }
  out.logits = model.head(x.narrow(0, 0, n)).index_select(0, rows_of(nodes, row_in_part, x.device()));
  return out;
}

}  // namespace dgcn
