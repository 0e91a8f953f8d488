// dgcn-prep's subcommands. Each reader subcommand registers itself on the
// CLI11 app with its own flags plus the shared output flags, reads its
// layout into a GraphStore (datasets/), and hands it to write_output().
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn::prep {

// Flags every reader subcommand shares.
struct OutputOptions {
  std::string out;               // --out FILE.gcn (required)
  std::string reorder = "none";  // --reorder none|rcm
  EdgeOptions edges;             // --directed, --keep-self-loops, --keep-duplicates
  int threads = 0;               // --threads (0 = all cores)
  int zstd_level = 3;            // --zstd-level
  bool all_raw = false;          // --raw: every section uncompressed, mappable in place
};

// Adds --out, --reorder, --directed, --keep-self-loops, --keep-duplicates,
// --threads, --zstd-level and --raw to `cmd`, storing into `options`.
void add_output_flags(CLI::App& cmd, OutputOptions& options);
// The same without the edge flags, for commands that do not build a CSR
// (convert).
void add_write_flags(CLI::App& cmd, OutputOptions& options);

// Validates `store`, applies --reorder, writes options.out atomically (temp
// name, fsync, rename) and prints one JSON line describing what was written.
void write_output(GraphStore store, const OutputOptions& options);

// The line SIGINT/SIGTERM print (base/atomic_file.h) while `out` is being
// written, and once it is whole, so the user learns which state it is in.
void note_interrupts_while_writing(const std::string& out);
void note_interrupts_after_writing(const std::string& out);

// One function per subcommand; each adds a subcommand to `app`.
void register_info(CLI::App& app);        // info FILE [--components]
void register_verify(CLI::App& app);      // verify FILE
void register_ogb(CLI::App& app);         // ogb --root DIR
void register_graphsaint(CLI::App& app);  // graphsaint --root DIR
void register_npz(CLI::App& app);         // npz --file F.npz --split ...
void register_planetoid(CLI::App& app);   // planetoid --root DIR --name cora|citeseer|pubmed
void register_edgelist(CLI::App& app);    // edgelist --file F
void register_synthetic(CLI::App& app);   // synthetic --preset ... --seed S
void register_convert(CLI::App& app);     // convert FILE --out F.gcn [--raw]: re-encode a store
void register_load_bench(CLI::App& app);  // load-bench FILE: load times and memory per load mode
void register_partition(CLI::App& app);   // partition FILE --parts N --out DIR: part stores + manifest

}  // namespace dgcn::prep
