// The output half every reader subcommand shares: flags, validation, the
// atomic write and the one-line JSON summary.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "base/atomic_file.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "graph/reorder.h"
#include "graph/store_format.h"

namespace dgcn::prep {

void add_write_flags(CLI::App& cmd, OutputOptions& o) {
  cmd.add_option("--out", o.out,
                 "the .gcn file to write; it is written under a temporary name in the same directory and "
                 "renamed at the end, so a failed run leaves no partial file and an existing file untouched")
      ->required();
  cmd.add_option("--reorder", o.reorder,
                 "node order of the output: none (keep the input's order) or rcm (reverse Cuthill-McKee: "
                 "neighbours get nearby ids, so feature gathers touch fewer pages)")
      ->check(CLI::IsMember({"none", "rcm"}));
  cmd.add_option("--threads", o.threads, "threads for validation and compression (0 = all cores)")
      ->check(dgcn::cli::kNonNegative);
  cmd.add_option("--zstd-level", o.zstd_level,
                 "zstd level of the compressed sections, 1..22 (higher: smaller file, slower write; "
                 "reading speed barely changes)")
      ->check(CLI::Range(1, 22));
  cmd.add_flag("--raw", o.all_raw,
               "store every section uncompressed and page-aligned, so shared-cache loads map the file in "
               "place (a larger file, no decompression)");
}

void add_output_flags(CLI::App& cmd, OutputOptions& o) {
  add_write_flags(cmd, o);
  cmd.add_flag_callback(
      "--directed", [&o] { o.edges.symmetrize = false; },
      "keep edges as given (by default the reverse of every edge is added). Node v then aggregates along its "
      "incoming edges u -> v, as PyG's message passing does: v's row lists its in-neighbours, and sampling "
      "and GCN normalization use in-degrees");
  cmd.add_flag_callback(
      "--keep-self-loops", [&o] { o.edges.drop_self_loops = false; },
      "keep edges v -> v; by default they are dropped");
  cmd.add_flag_callback(
      "--keep-duplicates", [&o] { o.edges.drop_duplicates = false; },
      "keep repeated edges; by default one copy of each is kept");
}

namespace {

// --reorder rcm on a validated store; permute() keeps it valid.
GraphStore reorder_rcm(const GraphStore& store, int threads) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int64_t> perm = rcm_ordering(store.graph, threads);
  const auto t1 = std::chrono::steady_clock::now();
  PermuteReport r;
  GraphStore out = permute(store, perm, threads, "rcm", &r);
  const auto t2 = std::chrono::steady_clock::now();
  spdlog::info(
      "reordered by RCM: bandwidth max {} -> {}, mean {:.1f} -> {:.1f} (ordering {:.2f} s, permuting {:.2f} "
      "s)",
      r.before.max, r.after.max, r.before.mean, r.after.mean, std::chrono::duration<double>(t1 - t0).count(),
      std::chrono::duration<double>(t2 - t1).count());
  return out;
}

}  // namespace

void note_interrupts_while_writing(const std::string& out) {
  set_interrupt_note(fmt::format("dgcn-prep: interrupted; nothing was written ({} is as it was)\n", out), "",
                     "");
}

void note_interrupts_after_writing(const std::string& out) {
  set_interrupt_note(fmt::format("dgcn-prep: interrupted after {} was written whole\n", out), "", "");
}

void write_output(GraphStore store, const OutputOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  note_interrupts_while_writing(o.out);
  const int threads = resolve_threads(o.threads);
  DGCN_CHECK(o.reorder == "none" || o.reorder == "rcm", "--reorder {}: expected none or rcm", o.reorder);
  spdlog::info("validating the store ({} nodes, {} CSR entries, {} features)", store.num_nodes(),
               store.num_edges(), store.num_features);
  store.validate(fmt::format("store for {}", o.out), threads);
  if (o.reorder == "rcm") store = reorder_rcm(store, threads);

  SaveOptions save;
  save.zstd_level = o.zstd_level;
  save.threads = threads;
  save.all_raw = o.all_raw;
  save.progress = [](const std::string& line) { spdlog::info("{}", line); };
  const SaveResult r = save_store(store, o.out, save);
  note_interrupts_after_writing(o.out);

  const double seconds = seconds_since(t0);
  nlohmann::json j = {{"path", o.out},
                      {"bytes", r.file_bytes},
                      {"raw_bytes", r.raw_bytes},
                      {"ratio", r.file_bytes > 0 ? static_cast<double>(r.raw_bytes) / r.file_bytes : 0.0},
                      {"num_nodes", store.num_nodes()},
                      {"num_edges", store.num_edges()},
                      {"seconds", seconds}};
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  spdlog::info("wrote {} ({} bytes, {:.2f}x smaller than raw) in {:.2f} s", o.out, r.file_bytes,
               r.file_bytes > 0 ? static_cast<double>(r.raw_bytes) / r.file_bytes : 0.0, seconds);
}

}  // namespace dgcn::prep
