// dgcn-prep synthetic --preset P: a products-like synthetic graph -> .gcn
// (datasets/synthetic.h). Every spec field can be overridden; the flags left
// out keep the preset's value.
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <optional>

#include "apps/prep/prep.h"
#include "base/timing.h"
#include "datasets/synthetic.h"

namespace dgcn::prep {

namespace {

struct Overrides {
  std::optional<int64_t> num_nodes, num_features, num_classes;
  std::optional<double> mean_degree, degree_exponent, max_weight_ratio, class_skew, homophily,
      ambiguous_fraction, misleading_fraction, feature_noise, train_fraction, valid_fraction, test_fraction;
};

template <class T>
void apply(const std::optional<T>& value, T& field) {
  if (value) field = *value;
}

}  // namespace

void register_synthetic(CLI::App& app) {
  struct State {
    std::string preset = "small";
    uint64_t seed = 0;
    Overrides o;
    OutputOptions output;
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "synthetic",
      "Generate a products-like graph: power-law degrees (Chung-Lu), classes of Zipf-skewed sizes, edge "
      "homophily as asked, class-conditional Gaussian features, ambiguous and misleading nodes, random "
      "splits. The same preset, overrides and seed give the same file on any thread count. Overrides "
      "default to the preset's value (tiny: 3,000 nodes, mean degree 20, 16 features, 8 classes; small: "
      "100,000 nodes, 30, 100, 47; products: 2,449,029 nodes, 50.5, 100, 47, like ogbn-products).");
  cmd->add_option("--preset", state->preset, "tiny (tests), small (demos) or products (ogbn-products sizes)")
      ->check(CLI::IsMember({"tiny", "small", "products"}));
  cmd->add_option("--seed", state->seed, "seed of every random draw");
  Overrides& o = state->o;
  cmd->add_option("--num-nodes", o.num_nodes,
                  "number of nodes (preset: tiny 3000, small 100000, products 2449029)");
  cmd->add_option("--mean-degree", o.mean_degree,
                  "CSR entries per node after symmetrizing and dropping duplicates (preset: 20, 30, 50.5)");
  cmd->add_option("--num-features", o.num_features, "features per node, 0 for none (preset: 16, 100, 100)");
  cmd->add_option("--num-classes", o.num_classes, "number of classes (preset: 8, 47, 47)");
  cmd->add_option("--degree-exponent", o.degree_exponent,
                  "exponent gamma of the power law of node weights, P(w) ~ w^-gamma, > 1 (unset: 2.5)");
  cmd->add_option("--max-weight-ratio", o.max_weight_ratio,
                  "cap of a node's weight (~ expected degree) over the smallest one (preset: 50, 300, 1000)");
  cmd->add_option(
      "--class-skew", o.class_skew,
      "Zipf exponent of class sizes: class c has probability ~ (c+1)^-skew, 0 = equal (unset: 1)");
  cmd->add_option("--homophily", o.homophily,
                  "target edge homophily: the fraction of edges joining two nodes of one class (unset: 0.8)");
  cmd->add_option(
      "--ambiguous-fraction", o.ambiguous_fraction,
      "fraction of nodes (the lowest-degree ones) whose edges and features both follow a decoy class, "
      "so no model can tell their label; caps accuracy near 1 - this (unset: 0.24)");
  cmd->add_option("--misleading-fraction", o.misleading_fraction,
                  "fraction of nodes whose features are drawn around another class's mean while their edges "
                  "stay true: only a model reading the neighbours gets them (unset: 0.06)");
  cmd->add_option(
      "--feature-noise", o.feature_noise,
      "standard deviation of the feature noise; class means have standard deviation 1 (unset: 2.2)");
  cmd->add_option("--train-fraction", o.train_fraction,
                  "fraction of nodes to train on (preset: 0.5, 0.2, 0.08)");
  cmd->add_option("--valid-fraction", o.valid_fraction,
                  "fraction of validation nodes (preset: 0.2, 0.05, 0.016)");
  cmd->add_option("--test-fraction", o.test_fraction, "fraction of test nodes (preset: 0.3, 0.75, 0.904)");
  // The spec fixes the graph (symmetric, no self-loops, no duplicates), so
  // the edge flags of the readers do not apply here.
  add_write_flags(*cmd, state->output);
  cmd->callback([state] {
    SyntheticSpec spec = synthetic_preset(state->preset);
    const Overrides& o = state->o;
    spec.seed = state->seed;
    apply(o.num_nodes, spec.num_nodes);
    apply(o.mean_degree, spec.mean_degree);
    apply(o.num_features, spec.num_features);
    apply(o.num_classes, spec.num_classes);
    apply(o.degree_exponent, spec.degree_exponent);
    apply(o.max_weight_ratio, spec.max_weight_ratio);
    apply(o.class_skew, spec.class_skew);
    apply(o.homophily, spec.homophily);
    apply(o.ambiguous_fraction, spec.ambiguous_fraction);
    apply(o.misleading_fraction, spec.misleading_fraction);
    apply(o.feature_noise, spec.feature_noise);
    apply(o.train_fraction, spec.train_fraction);
    apply(o.valid_fraction, spec.valid_fraction);
    apply(o.test_fraction, spec.test_fraction);
    const auto t0 = std::chrono::steady_clock::now();
    GraphStore store = generate_synthetic(spec, state->output.threads);
    spdlog::info("synthetic: generated in {:.2f} s", seconds_since(t0));
    write_output(std::move(store), state->output);
  });
}

}  // namespace dgcn::prep
