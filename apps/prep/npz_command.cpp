// dgcn-prep npz --file F.npz: a gnn-benchmark .npz (cora, citeseer, ...) -> .gcn, with a seeded split
#include <memory>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "datasets/npz_reader.h"

namespace dgcn::prep {

void register_npz(CLI::App& app) {
  struct State {
    NpzOptions reader;
    std::string split = "per-class:20,valid:500,test:1000";
    OutputOptions output;
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "npz",
      "Read a gnn-benchmark .npz file (adj_data/adj_indices/adj_indptr/adj_shape, attr_* sparse or "
      "attr_matrix "
      "dense features, labels; text arrays such as node_names are skipped). It has no split, so one is made "
      "from --split and --seed.");
  cmd->add_option("--file", state->reader.file, "the .npz file (e.g. cora.npz)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
      "--split", state->split,
      "how to split the labelled nodes: 'per-class:K,valid:V,test:T' (Planetoid: K random nodes of "
      "every class to train, then V valid and T test from the rest), 'ratio:TRAIN,VALID,TEST' "
      "(fractions of the shuffled labelled nodes) or 'none'");
  cmd->add_option("--seed", state->reader.seed, "seed of the split (same seed, same split)");
  cmd->add_option("--num-classes", state->reader.num_classes,
                  "number of classes; labels must be below it (0: the largest label + 1)")
      ->check(dgcn::cli::kNonNegative);
  add_output_flags(*cmd, state->output);
  cmd->callback([state] {
    state->reader.split = parse_split_spec(state->split);
    state->reader.edges = state->output.edges;
    state->reader.num_threads = state->output.threads;
    write_output(read_npz_dataset(state->reader), state->output);
  });
}

}  // namespace dgcn::prep
