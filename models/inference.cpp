#include "models/inference.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "models/batch_tensors.h"

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

// rows ∪ neighbours(rows), sorted.
std::vector<int64_t> with_neighbours(const Csr& graph, const std::vector<int64_t>& rows) {
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

}  // namespace

at::Tensor full_neighbour_logits(GcnImpl& model, const GraphStore& store, const at::Tensor& features,
                                 std::span<const int64_t> nodes, const InferenceOptions& options) {
  return full_neighbour_outputs(model, store, features, nodes, options, 0).logits;
}

InferenceOutputs full_neighbour_outputs(GcnImpl& model, const GraphStore& store, const at::Tensor& features,
                                        std::span<const int64_t> nodes, const InferenceOptions& options,
                                        int64_t embedding_layer) {
  const int64_t n = store.num_nodes();
  const int64_t layers = model.num_layers();
  TORCH_CHECK(features.dim() == 2 && features.size(0) == n &&
                  features.size(1) == model.options().in_features && features.scalar_type() == at::kFloat,
              "inference: features must be float32 [", n, " x ", model.options().in_features, "] (got ",
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
  at::Tensor embeddings;          // layer embedding_layer's output at `nodes`
  std::vector<int32_t> position;  // node -> row of h, -1 when absent
  for (int64_t l = 0; l < layers; ++l) {
    const std::vector<int64_t>& r = rows[static_cast<size_t>(l)];
    GCNConv& conv = model.conv(l);
    const int64_t nnz = full_rows_nnz(store.graph, r);
    const AggregationOrder order =
        choose_aggregation_order(static_cast<int64_t>(r.size()), h.size(0), nnz, conv->in_features(),
                                 conv->out_features(), false, false);
    const at::Tensor src = order == AggregationOrder::kTransformFirst ? conv->transform(h) : h;
    at::Tensor next = at::empty({static_cast<int64_t>(r.size()), conv->out_features()}, h.options());
    for (int64_t begin = 0; begin < static_cast<int64_t>(r.size()); begin += options.chunk_rows) {
      const int64_t len = std::min<int64_t>(options.chunk_rows, static_cast<int64_t>(r.size()) - begin);
      CsrTensor adj = full_rows_adjacency(
          store.graph, store.degrees(),
          std::span<const int64_t>(r).subspan(static_cast<size_t>(begin), static_cast<size_t>(len)));
      if (compact) {
        // Global ids -> rows of h (every neighbour of a row of layer l is a row of layer l-1).
        int32_t* idx = adj.indices.data_ptr<int32_t>();
        for (int64_t e = 0; e < adj.nnz(); ++e) {
          idx[e] = position[static_cast<size_t>(idx[e])];
          DGCN_ASSERT(idx[e] >= 0);
        }
        adj.num_cols = h.size(0);
      }
      const CsrTensor a = adj.to(options.device);
      const at::Tensor y = order == AggregationOrder::kTransformFirst
                               ? conv->add_bias(conv->aggregate(a, src))
                               : conv->forward_with(a, src, AggregationOrder::kAggregateFirst);
      next.narrow(0, begin, len).copy_(model.activate(l, y));
    }
    h = next;
    position.assign(static_cast<size_t>(n), -1);
    for (size_t i = 0; i < r.size(); ++i) position[static_cast<size_t>(r[i])] = static_cast<int32_t>(i);
    compact = true;
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
  return out;
}

}  // namespace dgcn
