#include "models/gnn.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <vector>

#include "models/gcn.h"
#include "models/gnn_models.h"

namespace dgcn {
namespace {

void require_cpu_gcn_layout(const CsrTensor& a, const char* what) {
  TORCH_CHECK(a.indptr.device().is_cpu() && a.indptr.scalar_type() == at::kLong &&
                  a.indices.scalar_type() == at::kInt && a.values.scalar_type() == at::kFloat,
              what, ": needs a CPU adjacency with int64 indptr, int32 indices, float32 values (got ",
              a.indptr.device().str(), ", ", a.indptr.scalar_type(), ", ", a.indices.scalar_type(), ", ",
              a.values.scalar_type(), ")");
}

}  // namespace

at::Tensor GnnModel::forward(const std::vector<CsrTensor>& blocks, const at::Tensor& x) {
  TORCH_CHECK(static_cast<int64_t>(blocks.size()) == num_layers(), model_kind_name(kind()), ": got ",
              blocks.size(), " blocks for a model with ", num_layers(), " layers (one fanout per layer)");
  at::Tensor h = x;
  for (int64_t l = 0; l < num_layers(); ++l) {
    const CsrTensor& adj = blocks[static_cast<size_t>(l)];
    // The dst nodes of a block are a prefix of its src nodes and blocks nest:
    // layer l reads the first num_src rows of the previous output.
    if (h.size(0) != adj.num_cols) {
      TORCH_CHECK(h.size(0) > adj.num_cols, model_kind_name(kind()), ": layer ", l, " needs ", adj.num_cols,
                  " input rows, got ", h.size(0));
      h = h.narrow(0, 0, adj.num_cols);
    }
    h = layer(l, adj, h);
  }
  return head(h);
}

GnnModelPtr make_model(const ModelOptions& o) {
  const char* name = model_kind_name(o.kind);
  if (o.kind != ModelKind::kGat) {
    TORCH_CHECK(o.heads == 1, name, ": has no attention heads (got heads ", o.heads,
                "); heads are a GAT setting (--model gat)");
    TORCH_CHECK(o.attention_dropout == 0, name, ": has no attention to drop out (got attention dropout ",
                o.attention_dropout, "); it is a GAT setting (--model gat)");
  }
  TORCH_CHECK(o.kind == ModelKind::kGcn || o.precision == Precision::kFp32, name,
              ": runs in fp32 only (bf16 is a GCN setting for now)");
  switch (o.kind) {
    case ModelKind::kGcn: {
      GcnOptions g;
      g.in_features = o.in_features;
      g.hidden = o.hidden;
      g.num_classes = o.num_classes;
      g.num_layers = o.num_layers;
      g.dropout = o.dropout;
      g.input_dropout = o.input_dropout;
      g.linear_head = o.linear_head;
      g.precision = o.precision;
      return std::make_shared<GcnImpl>(g);
    }
    case ModelKind::kSage:
      return std::make_shared<SageImpl>(o);
    case ModelKind::kGat:
      return std::make_shared<GatImpl>(o);
  }
  TORCH_CHECK(false, "make_model: unknown model kind ", static_cast<int>(o.kind));
}

CsrTensor adjacency_for(const CsrTensor& a, AdjacencyValues values) {
  if (values == AdjacencyValues::kGcnNormalized) return a;
  require_cpu_gcn_layout(a, "adjacency_for");
  const int64_t rows = a.num_rows;
  const int64_t* ptr = a.indptr.data_ptr<int64_t>();
  const int32_t* idx = a.indices.data_ptr<int32_t>();
  const bool mean = values == AdjacencyValues::kMean;
  // Row i keeps its neighbours (entries after the first); kStructure keeps
  // its self loop too, and drops an edge i -> i the graph itself holds, so
  // that GAT attends to i once (PyG's GATConv: remove, then add self loops).
  // kMean keeps every sampled edge, as PyG's SAGEConv averages them.
  std::vector<int64_t> keep(static_cast<size_t>(rows) + 1, 0);
  for (int64_t i = 0; i < rows; ++i) {
    TORCH_INTERNAL_ASSERT(ptr[i + 1] > ptr[i], "adjacency_for: row ", i, " has no self loop");
    int64_t k = mean ? 0 : 1;
    for (int64_t e = ptr[i] + 1; e < ptr[i + 1]; ++e) k += mean || idx[e] != idx[ptr[i]];
    keep[static_cast<size_t>(i) + 1] = keep[static_cast<size_t>(i)] + k;
  }
  CsrTensor out;
  out.num_rows = rows;
  out.num_cols = a.num_cols;
  out.indptr = torch::tensor(keep, torch::kLong);
  out.indices = at::empty({keep.back()}, a.indices.options());
  out.values = at::empty({keep.back()}, a.values.options());
  int32_t* oidx = out.indices.data_ptr<int32_t>();
  float* oval = out.values.data_ptr<float>();
  at::parallel_for(0, rows, 1 << 12, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      int64_t o = keep[static_cast<size_t>(i)];
      const int64_t k = keep[static_cast<size_t>(i) + 1] - o;
      const float w = mean ? 1.0f / static_cast<float>(k) : 1.0f;
      if (!mean) oidx[o] = idx[ptr[i]], oval[o++] = w;
      for (int64_t e = ptr[i] + 1; e < ptr[i + 1]; ++e) {
        if (!mean && idx[e] == idx[ptr[i]]) continue;
        oidx[o] = idx[e];
        oval[o++] = w;
      }
    }
  });
  return out;
}

ChunkBlock chunk_block(const CsrTensor& a) {
  require_cpu_gcn_layout(a, "chunk_block");
  const int64_t rows = a.num_rows;
  const int64_t* ptr = a.indptr.data_ptr<int64_t>();
  const int32_t* idx = a.indices.data_ptr<int32_t>();
  std::vector<int32_t> column(static_cast<size_t>(a.num_cols), -1);
  std::vector<int64_t> source;  // the h row of each new column
  source.reserve(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    TORCH_INTERNAL_ASSERT(ptr[i + 1] > ptr[i], "chunk_block: row ", i, " has no self loop");
    const int32_t own = idx[ptr[i]];
    TORCH_INTERNAL_ASSERT(column[static_cast<size_t>(own)] < 0, "chunk_block: column ", own,
                          " is the self loop of two rows");
    column[static_cast<size_t>(own)] = static_cast<int32_t>(i);
    source.push_back(own);
  }
  ChunkBlock out;
  out.block.num_rows = rows;
  out.block.indptr = a.indptr;
  out.block.values = a.values;
  out.block.indices = at::empty_like(a.indices);
  int32_t* bidx = out.block.indices.data_ptr<int32_t>();
  for (int64_t e = 0; e < a.nnz(); ++e) {
    int32_t& c = column[static_cast<size_t>(idx[e])];
    if (c < 0) {
      c = static_cast<int32_t>(source.size());
      source.push_back(idx[e]);
    }
    bidx[e] = c;
  }
  out.block.num_cols = static_cast<int64_t>(source.size());
  out.rows = torch::tensor(source, torch::kLong);
  return out;
}

}  // namespace dgcn
