// dgcn-prep planetoid --root DIR --name cora|citeseer|pubmed: PyG's Planetoid raw files -> .gcn, public split
#include <memory>

#include "apps/prep/prep.h"
#include "datasets/planetoid_reader.h"

namespace dgcn::prep {

void register_planetoid(CLI::App& app) {
  struct State {
    PlanetoidOptions reader;
    OutputOptions output;
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "planetoid",
      "Read Cora, CiteSeer or PubMed as PyG's Planetoid dataset keeps them (DIR/raw/ind.<name>.{x,tx,allx,y,"
      "ty,ally,graph,test.index}, or the files directly in DIR) with the standard public split: train the "
      "first len(y) nodes (140 for Cora), valid the next 500, test the 1000 of test.index. The pickles are "
      "read by a restricted reader that executes nothing and refuses anything but numpy arrays, scipy CSR "
      "matrices, lists and defaultdicts.");
  cmd->add_option("--root", state->reader.root,
                  "the dataset folder (with raw/ inside, or the files themselves)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--name", state->reader.name, "which dataset: cora, citeseer or pubmed (the file prefix)")
      ->required()
      ->transform(CLI::IsMember({"cora", "citeseer", "pubmed"}, CLI::ignore_case));
  add_output_flags(*cmd, state->output);
  cmd->callback([state] {
    state->reader.edges = state->output.edges;
    state->reader.num_threads = state->output.threads;
    write_output(read_planetoid(state->reader), state->output);
  });
}

}  // namespace dgcn::prep
