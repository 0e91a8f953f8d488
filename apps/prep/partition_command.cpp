// `dgcn-prep partition F.gcn --parts N --out DIR [--method metis|random]
// [--seed S]`: splits a store into N part stores plus a manifest
// (partition/partition_files.h), for `dgcn-train --data DIR` on N ranks. Prints
// one JSON line: the edge cut, each constraint's balance, the parts and the
// time.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "graph/store_format.h"
#include "graph/store_header.h"
#include "partition/partition_files.h"

namespace dgcn::prep {

namespace {

struct PartitionCommandOptions {
  std::string file;
  std::string out;
  std::string method = "metis";
  int parts = 2;
  uint64_t seed = 0;
  int threads = 0;
  int zstd_level = 3;
};

void run_partition(const PartitionCommandOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  note_interrupts_while_writing(o.out);
  const int threads = resolve_threads(o.threads);
  LoadOptions load;
  load.threads = threads;
  spdlog::info("loading {}", o.file);
  const GraphStore whole = load_store(o.file, load);
  spdlog::info("partitioning {} nodes, {} CSR entries into {} parts ({})", whole.num_nodes(),
               whole.num_edges(), o.parts, o.method);
  WritePartitionOptions w;
  w.partition.parts = o.parts;
  w.partition.method = parse_partition_method(o.method);
  w.partition.seed = o.seed;
  w.partition.threads = threads;
  w.save.zstd_level = o.zstd_level;
  w.save.threads = threads;
  // Absolute, so dgcn-predict finds the whole store from any working folder.
  w.source_path = std::filesystem::absolute(o.file).string();
  w.progress = [](const std::string& line) { spdlog::info("{}", line); };
  const WritePartitionResult r = write_partition(whole, o.out, w);
  note_interrupts_after_writing(o.out);
  const double seconds = seconds_since(t0);
  const nlohmann::json j = {{"path", o.out},
                            {"parts", r.manifest.parts},
                            {"method", r.manifest.method},
                            {"seed", r.manifest.seed},
                            {"partition_id", r.manifest.partition_id},
                            {"num_nodes", whole.num_nodes()},
                            {"num_edges", whole.num_edges()},
                            {"quality", r.manifest.quality},
                            {"bytes", r.file_bytes},
                            {"assign_seconds", r.assign_seconds},
                            {"write_seconds", r.write_seconds},
                            {"seconds", seconds}};
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  spdlog::info(
      "wrote {} parts into {}: {:.1f}% of CSR entries cross parts; balance nodes {:.3f}, train {:.3f}, "
      "entries {:.3f}; {:.1f} s",
      r.manifest.parts, o.out, 100 * r.quality.cut_fraction, r.quality.node_balance, r.quality.train_balance,
      r.quality.entry_balance, seconds);
}

}  // namespace

void register_partition(CLI::App& app) {
  auto o = std::make_shared<PartitionCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "partition",
      "split a .gcn store into N part stores and a manifest (DIR/partition.json, DIR/part-000.gcn, ...) for "
      "dgcn-train --data DIR on N ranks, each rank holding one part");
  cmd->add_option("file", o->file, "the .gcn store to partition")->required();
  cmd->add_option("--parts", o->parts, "number of parts (= ranks of the training job)")
      ->required()
      ->check(CLI::Range(1, static_cast<int>(detail::kMaxParts)));
  cmd->add_option("--out", o->out,
                  "the folder to write; must not exist or be empty. Parts are written one at a time, the "
                  "manifest last; a failed run leaves nothing behind")
      ->required();
  cmd->add_option("--method", o->method,
                  "metis: METIS k-way, few edges cut, balancing nodes, training nodes and edges per part; "
                  "random: a seeded shuffle cut into equal slices (many edges cut; a baseline)")
      ->check(CLI::IsMember({"metis", "random"}));
  cmd->add_option("--seed", o->seed, "seed of METIS's or the random split's choices");
  cmd->add_option("--threads", o->threads, "threads for loading, checks and compression (0 = all cores)")
      ->check(dgcn::cli::kNonNegative);
  cmd->add_option("--zstd-level", o->zstd_level, "zstd level of the part stores, 1..22")
      ->check(CLI::Range(1, 22));
  cmd->callback([o] { run_partition(*o); });
}

}  // namespace dgcn::prep
