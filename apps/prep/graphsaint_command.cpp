// dgcn-prep graphsaint --root DIR: a GraphSAINT/PyG folder (AmazonProducts, Flickr, Yelp) -> .gcn
#include <memory>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "datasets/graphsaint_reader.h"

namespace dgcn::prep {

void register_graphsaint(CLI::App& app) {
  struct State {
    GraphSaintOptions reader;
    OutputOptions output;
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "graphsaint",
      "Read a GraphSAINT dataset folder as PyG's AmazonProducts/Flickr/Yelp use it: adj_full.npz (scipy "
      "CSR), "
      "feats.npy, class_map.json (multi-hot lists or single class ids, parsed as a stream) and role.json "
      "(tr/va/te node lists).");
  cmd->add_option(
         "--root", state->reader.root,
         "the folder holding adj_full.npz, feats.npy, ..., or PyG's dataset folder (AmazonProducts/) "
         "with them in raw/")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--num-classes", state->reader.num_classes,
                  "single-label class_map only: number of classes, labels must be below it (0: the "
                  "largest label + 1)")
      ->check(dgcn::cli::kNonNegative);
  add_output_flags(*cmd, state->output);
  cmd->callback([state] {
    state->reader.edges = state->output.edges;
    state->reader.num_threads = state->output.threads;
    write_output(read_graphsaint(state->reader), state->output);
  });
}

}  // namespace dgcn::prep
