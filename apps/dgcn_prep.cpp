// dgcn-prep: turns an outside dataset layout (or a synthetic spec) into a
// .gcn graph store, and inspects, checks, re-encodes and benchmarks .gcn
// files. Each subcommand lives in apps/prep/; this file only wires them up.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "apps/cli/cli.h"
#include "apps/flag_names.h"
#include "apps/prep/prep.h"
#include "base/atomic_file.h"
#include "base/error.h"

int main(int argc, char** argv) {
  // stdout carries the JSON results; the log goes to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_st("dgcn-prep"));
  spdlog::set_pattern("[%T.%e] %v");
  // Ctrl-C or SIGTERM removes the temporaries (the output is written under a
  // temporary name and renamed at the end) and says so in one line; the
  // writers name their --out in it (apps/prep/output.cpp).
  dgcn::remove_temporary_files_on_signals();
  dgcn::set_interrupt_note("dgcn-prep: interrupted; nothing was written\n", "", "");

  CLI::App app{
      "dgcn-prep: build .gcn graph stores and inspect them. Results are JSON on stdout, progress on "
      "stderr; a bad input is an error naming the file, field and values, with exit status 1 and no "
      "partial output."};
  dgcn::cli::setup(app, "dgcn-prep");
  app.require_subcommand(1);
  // One line per subcommand (apps/prep/prep.h); a new reader adds its line here.
  dgcn::prep::register_info(app);
  dgcn::prep::register_verify(app);
  dgcn::prep::register_convert(app);
  dgcn::prep::register_load_bench(app);
  dgcn::prep::register_partition(app);
  dgcn::prep::register_ogb(app);
  dgcn::prep::register_graphsaint(app);
  dgcn::prep::register_npz(app);
  dgcn::prep::register_planetoid(app);
  dgcn::prep::register_edgelist(app);
  dgcn::prep::register_synthetic(app);

  return dgcn::cli::run_main(
      "dgcn-prep",
      [&] {
        try {
          app.parse(argc, argv);  // subcommands run from their callbacks, inside parse
        } catch (const CLI::ParseError& e) {
          return dgcn::cli::exit_status(app, e);  // --help is 0; a usage error is 2
        }
        return 0;
      },
      // The readers name their arguments; these are the flags that set them.
      [](const std::exception& e) {
        return dgcn::cli::with_flag_names(
            e.what(),
            {{"num_classes", "--num-classes"}, {"num_nodes", "--num-nodes"}, {"split spec", "--split"}});
      });
}
