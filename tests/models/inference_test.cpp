#include "models/inference.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <numeric>

#include "fixtures.h"
#include "in_process_collectives.h"
#include "models/batch_tensors.h"
#include "models/full_blocks.h"
#include "models/random_parameters.h"
#include "models/store_features.h"
#include "partition/partition.h"

namespace dgcn {
namespace {

using testing::features_of;

GraphStore store_with(int64_t features) {
  auto e = testing::eight_node_edges();
  e.num_nodes = 30;
  for (int64_t v = 9; v < 24; ++v) e.add(8, v);
  for (int64_t v = 24; v < 30; ++v) e.add(v, v - 1);
  e.add(9, 10), e.add(10, 0), e.add(4, 12), e.add(29, 5);
  return testing::make_store(e, features, 4);
}

// Dense full-graph GCN with the model's parameters, in double.
torch::Tensor dense_gcn(GcnImpl& model, const GraphStore& s) {
  const int64_t n = s.num_nodes();
  auto a = torch::zeros({n, n}, torch::kDouble);
  const auto deg = s.degrees();
  const auto ptr = s.graph.indptr();
  const auto idx = s.graph.indices<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    a[i][i] = 1.0 / (deg[i] + 1.0);
    for (int64_t e = ptr[i]; e < ptr[i + 1]; ++e)
      a[i][idx[e]] = 1.0 / std::sqrt((deg[i] + 1.0) * (deg[idx[e]] + 1.0));
  }
  auto h = features_of(s).to(torch::kDouble);
  for (int64_t l = 0; l < model.num_layers(); ++l) {
    auto& conv = model.conv(l);
    h = a.mm(h).mm(conv->weight.to(torch::kDouble)) + conv->bias.to(torch::kDouble);
    if (l + 1 < model.num_layers() || model.options().linear_head) h = torch::relu(h);
  }
  if (model.options().linear_head) {
    auto params = model.named_parameters();
    h = h.mm(params["head.weight"].to(torch::kDouble).t()) + params["head.bias"].to(torch::kDouble);
  }
  return h;
}

TEST(Inference, LayerWiseEqualsFullGraphGcn) {
  // 40 features -> hidden 6 makes layer 0 transform first; 6 -> 6 aggregates first.
  const GraphStore s = store_with(40);
  for (int64_t layers : {1, 2, 3}) {
    for (bool head : {false, true}) {
      torch::manual_seed(layers);
      GcnOptions o;
      o.in_features = 40, o.hidden = 6, o.num_classes = 4, o.num_layers = layers, o.linear_head = head;
      o.dropout = 0.5;
      Gcn model(o);
      testing::randomize_parameters(*model);  // non-zero biases, which the oracle adds
      model->train();
      const std::vector<int64_t> nodes{29, 3, 8, 3, 17, 0};
      InferenceOptions io;
      io.chunk_rows = 4;  // several chunks per layer
      const auto got = full_neighbour_logits(*model, s, features_of(s), nodes, io);
      EXPECT_TRUE(model->is_training()) << "the caller's mode is restored";
      const auto want = dense_gcn(*model, s).index_select(0, torch::tensor(nodes));
      EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), want, 1e-5, 1e-5))
          << layers << " layers, head " << head << "\n"
          << got << want;
    }
  }
}

TEST(Inference, EqualsSampledForwardWithEveryNeighbour) {
  const GraphStore s = store_with(5);
  torch::manual_seed(7);
  GcnOptions o;
  o.in_features = 5, o.hidden = 8, o.num_classes = 4, o.num_layers = 3;
  Gcn model(o);
  testing::randomize_parameters(*model);
  model->eval();
  const std::vector<int64_t> seeds{8, 27, 1};
  const auto batch = testing::full_neighbourhood_batch(s.graph, seeds, 3);
  const auto adj = batch_adjacency(batch, GcnNorm::kFullGraph, s.degrees());
  torch::NoGradGuard no_grad;
  const auto sampled = model->forward(adj, features_of(s).index_select(0, torch::tensor(batch.n_id)));
  const auto layer_wise = full_neighbour_logits(*model, s, features_of(s), seeds, InferenceOptions{});
  EXPECT_TRUE(torch::allclose(sampled, layer_wise, 1e-5, 1e-5));
}

TEST(Inference, RejectsBadInput) {
  const GraphStore s = store_with(5);
  GcnOptions o;
  o.in_features = 5, o.hidden = 8, o.num_classes = 4, o.num_layers = 2;
  Gcn model(o);
  const std::vector<int64_t> outside{30};
  EXPECT_THROW(full_neighbour_logits(*model, s, features_of(s), outside, {}), c10::Error);
  const std::vector<int64_t> fine{1};
  EXPECT_THROW(full_neighbour_logits(*model, s, torch::zeros({30, 4}), fine, {}), c10::Error);
}

// Each part computes its own nodes' rows layer by layer, the halo's rows
// from their owners: the logits and embeddings of the whole graph's
// layer-wise inference, up to float rounding, on 2 and 3 parts.
TEST(Inference, OverThePartsOfAPartitionedGraphEqualsTheWholeGraphs) {
  const GraphStore whole = store_with(40);
  for (int count : {2, 3}) {
    const Buffer owner = Buffer::from_vector(assign_parts(
        whole, {.parts = count, .method = PartitionMethod::kRandom, .seed = static_cast<uint64_t>(count)}));
    std::vector<GraphStore> parts;
    std::vector<std::unique_ptr<PartMap>> maps;
    for (int p = 0; p < count; ++p) {
      parts.push_back(extract_part(whole, owner, p, count, "{}", 1));
      maps.push_back(std::make_unique<PartMap>(parts.back().part));
    }
    for (bool head : {false, true}) {
      GcnOptions o;
      o.in_features = 40, o.hidden = 6, o.num_classes = 4, o.num_layers = 3, o.linear_head = head;
      // One model per rank (ranks are threads here; a model's train/eval
      // mode is its own), all with the same weights.
      std::vector<Gcn> models;
      for (int p = 0; p <= count; ++p) {
        torch::manual_seed(count);
        models.emplace_back(o);
        testing::randomize_parameters(*models.back());  // non-zero biases, the same on every rank
      }
      Gcn& model = models.back();
      InferenceOptions io;
      io.chunk_rows = 3;
      std::vector<int64_t> all(static_cast<size_t>(whole.num_nodes()));
      std::iota(all.begin(), all.end(), int64_t{0});
      const InferenceOutputs want = full_neighbour_outputs(*model, whole, features_of(whole), all, io, 2);
      testing::InProcessGroup group(count);
      std::vector<InferenceOutputs> got(static_cast<size_t>(count));
      testing::run_ranks(count, [&](int p) {
        const GraphStore& part = parts[static_cast<size_t>(p)];
        const auto ids = part.part.ids();
        // Every rank's own nodes, in reverse order; the last part asks for none.
        std::vector<int64_t> nodes(ids.rbegin(), ids.rend());
        if (p == count - 1) nodes.clear();
        got[static_cast<size_t>(p)] = partitioned_full_neighbour_outputs(
            *models[static_cast<size_t>(p)], part, *maps[static_cast<size_t>(p)], group.at(p),
            features_of(part), nodes, io, 2);
      });
      for (int p = 0; p + 1 < count; ++p) {
        const auto ids = parts[static_cast<size_t>(p)].part.ids();
        const std::vector<int64_t> nodes(ids.rbegin(), ids.rend());
        const auto rows = torch::tensor(nodes);
        EXPECT_TRUE(torch::allclose(got[static_cast<size_t>(p)].logits, want.logits.index_select(0, rows),
                                    1e-5, 1e-6))
            << count << " parts, head " << head;
        EXPECT_TRUE(torch::allclose(got[static_cast<size_t>(p)].embeddings,
                                    want.embeddings.index_select(0, rows), 1e-5, 1e-6));
      }
      EXPECT_EQ(got[static_cast<size_t>(count - 1)].logits.size(0), 0);
    }
  }
}

}  // namespace
}  // namespace dgcn
