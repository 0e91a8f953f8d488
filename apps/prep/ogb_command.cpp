// dgcn-prep ogb --root DIR: an OGB node-property dataset folder -> .gcn
#include <memory>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "datasets/ogb_reader.h"

namespace dgcn::prep {

void register_ogb(CLI::App& app) {
  struct State {
    OgbOptions reader;
    OutputOptions output;
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "ogb",
      "Read an OGB node-property dataset folder in the layout ogbn-products ships: raw/edge.csv.gz, "
      "node-feat.csv.gz, node-label.csv.gz, num-node-list.csv.gz, num-edge-list.csv.gz and one "
      "split/<name>/{train,valid,test}.csv.gz. The large files are streamed and parsed in parallel.");
  cmd->add_option("--root", state->reader.root,
                  "the dataset folder holding raw/ and split/ (e.g. .../ogbn_products)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--num-classes", state->reader.num_classes,
                  "number of classes; labels must be below it (0: the largest label + 1)")
      ->check(dgcn::cli::kNonNegative);
  add_output_flags(*cmd, state->output);
  cmd->callback([state] {
    state->reader.edges = state->output.edges;
    state->reader.num_threads = state->output.threads;
    write_output(read_ogb(state->reader), state->output);
  });
}

}  // namespace dgcn::prep
