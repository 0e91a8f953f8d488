// dgcn-prep edgelist --file F: a SNAP-style edge list (plain or .gz) -> graph-only .gcn
#include <memory>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "datasets/edgelist_reader.h"

namespace dgcn::prep {

void register_edgelist(CLI::App& app) {
  struct State {
    EdgeListOptions reader;
    OutputOptions output;
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "edgelist",
      "Read an edge list: one 'src dst' pair per line separated by spaces or tabs, '#' comment lines, plain "
      "or "
      "gzip-compressed (SNAP style). The store holds the graph only (no features, labels or splits).");
  cmd->add_option("--file", state->reader.file, "the edge-list file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--num-nodes", state->reader.num_nodes,
                  "number of nodes; every id must be below it (0: the largest id + 1)")
      ->check(dgcn::cli::kNonNegative);
  add_output_flags(*cmd, state->output);
  cmd->callback([state] {
    state->reader.edges = state->output.edges;
    state->reader.num_threads = state->output.threads;
    write_output(read_edgelist(state->reader), state->output);
  });
}

}  // namespace dgcn::prep
