#include "models/gnn.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "fixtures.h"
#include "models/batch_tensors.h"
#include "models/full_blocks.h"
#include "models/gat.h"
#include "models/inference.h"
#include "models/random_parameters.h"
#include "models/sage.h"
#include "models/store_features.h"

namespace dgcn {
namespace {

using testing::features_of;

// The eight-node graph grown to 30 nodes, with a self-loop edge (3 -> 3),
// which GAT must attend to once.
GraphStore store_with(int64_t features) {
  auto e = testing::eight_node_edges();
  e.num_nodes = 30;
  for (int64_t v = 9; v < 24; ++v) e.add(8, v);
  for (int64_t v = 24; v < 30; ++v) e.add(v, v - 1);
  e.add(9, 10), e.add(10, 0), e.add(4, 12), e.add(29, 5), e.add(3, 3);
  return testing::make_store(e, features, 4);
}

void expect_same_csr(const CsrTensor& a, const CsrTensor& b) {
  EXPECT_EQ(a.num_rows, b.num_rows);
  EXPECT_EQ(a.num_cols, b.num_cols);
  EXPECT_TRUE(torch::equal(a.indptr, b.indptr));
  EXPECT_TRUE(torch::equal(a.indices, b.indices));
  EXPECT_TRUE(torch::equal(a.values, b.values));
}

ModelOptions options_of(ModelKind kind) {
  ModelOptions o;
  o.kind = kind;
  o.in_features = 5, o.hidden = 6, o.num_classes = 4, o.num_layers = 3;
  if (kind == ModelKind::kGat) o.heads = 2, o.attention_dropout = 0.3;
  return o;
}

// The values each model asks for are what the layers' own builders make
// (models/sage.h, models/gat.h), self-loop edge included.
TEST(Gnn, AdjacencyForIsWhatTheLayersBuildersMake) {
  const GraphStore s = store_with(5);
  const auto batch = testing::full_neighbourhood_batch(s.graph, {3, 8, 27}, 2);
  const auto gcn = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  ASSERT_EQ(gcn.size(), batch.blocks.size());
  for (size_t l = 0; l < gcn.size(); ++l) {
    SCOPED_TRACE(l);
    expect_same_csr(adjacency_for(gcn[l], AdjacencyValues::kGcnNormalized), gcn[l]);
    expect_same_csr(adjacency_for(gcn[l], AdjacencyValues::kMean), sage_block_adjacency(batch.blocks[l]));
    expect_same_csr(adjacency_for(gcn[l], AdjacencyValues::kStructure), gat_block_adjacency(batch.blocks[l]));
  }
}

// Rows of h: row 0 is node column 4 (neighbours 1, 5), row 1 column 1
// (neighbours 4, 0). The chunk's own columns come first, then the others in
// order of first appearance.
TEST(Gnn, ChunkBlockPutsTheChunksRowsFirst) {
  CsrTensor a;
  a.num_rows = 2, a.num_cols = 6;
  a.indptr = torch::tensor({0, 3, 6}, torch::kLong);
  a.indices = torch::tensor({4, 1, 5, 1, 4, 0}, torch::kInt);
  a.values = torch::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  const ChunkBlock c = chunk_block(a);
  EXPECT_EQ(c.block.num_rows, 2);
  EXPECT_EQ(c.block.num_cols, 4);
  EXPECT_TRUE(torch::equal(c.block.indices, torch::tensor({0, 1, 2, 1, 0, 3}, torch::kInt)));
  EXPECT_TRUE(torch::equal(c.block.values, a.values));
  EXPECT_TRUE(torch::equal(c.rows, torch::tensor({4, 1, 5, 0}, torch::kLong)));
}

// Layer-wise inference (chunks of 4 rows: several per layer) gives every
// model's forward pass over blocks that hold every neighbour.
TEST(Gnn, LayerWiseInferenceEqualsEveryModelsForwardWithEveryNeighbour) {
  const GraphStore s = store_with(5);
  const std::vector<int64_t> seeds{8, 27, 1, 3};
  const auto batch = testing::full_neighbourhood_batch(s.graph, seeds, 3);
  const auto gcn = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  for (ModelKind kind : {ModelKind::kGcn, ModelKind::kSage, ModelKind::kGat}) {
    SCOPED_TRACE(model_kind_name(kind));
    torch::manual_seed(7);
    GnnModelPtr model = make_model(options_of(kind));
    EXPECT_EQ(model->kind(), kind);
    testing::randomize_parameters(*model);
    model->eval();
    std::vector<CsrTensor> blocks;
    for (const auto& a : gcn) blocks.push_back(adjacency_for(a, model->adjacency_values()));
    torch::NoGradGuard no_grad;
    const auto sampled = model->forward(blocks, features_of(s).index_select(0, torch::tensor(batch.n_id)));
    InferenceOptions io;
    io.chunk_rows = 4;
    const auto layer_wise = full_neighbour_logits(*model, s, features_of(s), seeds, io);
    EXPECT_TRUE(torch::allclose(sampled, layer_wise, 1e-5, 1e-5)) << sampled << layer_wise;
  }
}

TEST(Gnn, ModelsRefuseSettingsTheyLack) {
  ModelOptions o = options_of(ModelKind::kGcn);
  o.heads = 2;
  EXPECT_THROW(make_model(o), c10::Error);
  o = options_of(ModelKind::kSage);
  o.attention_dropout = 0.5;
  EXPECT_THROW(make_model(o), c10::Error);
  o = options_of(ModelKind::kGat);
  o.heads = 0;
  EXPECT_THROW(make_model(o), c10::Error);
  o = options_of(ModelKind::kSage);
  o.precision = Precision::kBf16;
  EXPECT_THROW(make_model(o), c10::Error);
  EXPECT_THROW(parse_model_kind("mlp"), Error);
}

// GAT's widths: hidden layers heads x hidden (concatenated), the output
// layer one head of the classes.
TEST(Gnn, GatLayerWidths) {
  GnnModelPtr model = make_model(options_of(ModelKind::kGat));
  EXPECT_EQ(model->layer_out_features(0), 12);
  EXPECT_EQ(model->layer_out_features(1), 12);
  EXPECT_EQ(model->layer_out_features(2), 4);
  EXPECT_EQ(model->layer_parameters(0).size(), 4u) << "lin.weight, att_src, att_dst, bias";
}

}  // namespace
}  // namespace dgcn
