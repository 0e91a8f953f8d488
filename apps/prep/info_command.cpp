// `dgcn-prep info FILE`: loads (and so validates) a store and prints its
// statistics and section table as one JSON object.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "base/parallel.h"
#include "graph/components.h"
#include "graph/store_format.h"

namespace dgcn::prep {

namespace {

struct InfoOptions {
  std::string file;
  int threads = 0;
  bool components = false;
};

nlohmann::json degree_stats(const GraphStore& s) {
  auto d = s.degrees();
  if (d.empty()) return {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"isolated_nodes", 0}};
  int64_t lo = INT64_MAX, hi = 0, isolated = 0;
  for (int32_t v : d) {
    lo = std::min<int64_t>(lo, v);
    hi = std::max<int64_t>(hi, v);
    isolated += v == 0;
  }
  return {{"min", lo},
          {"max", hi},
          {"mean", static_cast<double>(s.num_edges()) / static_cast<double>(d.size())},
          {"isolated_nodes", isolated}};
}

nlohmann::json sections_json(const StoreHeader& h) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : h.sections) {
    out.push_back({{"name", s.name},
                   {"dtype", dtype_name(s.dtype)},
                   {"shape", {s.rows, s.cols}},
                   {"codec", codec_name(s.codec)},
                   {"stored_bytes", s.stored_size},
                   {"raw_bytes", s.raw_size},
                   {"frames", s.num_frames}});
  }
  return out;
}

// The statistics of a loaded store and its file's header.
nlohmann::json info_json(const std::string& path, const GraphStore& s, const StoreHeader& h) {
  // Metadata is JSON written by the reader; show it as such when it parses.
  nlohmann::json metadata = nlohmann::json::parse(s.metadata_json, nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded()) metadata = s.metadata_json;
  nlohmann::json j = {{"path", path},
                      {"file_bytes", h.file_size},
                      {"raw_bytes", h.raw_bytes()},
                      {"num_nodes", s.num_nodes()},
                      {"num_edges", s.num_edges()},
                      {"id_bits", 8 * static_cast<int>(s.graph.id_width())},
                      {"num_features", s.num_features},
                      {"task", task_name(s.task)},
                      {"num_classes", s.num_classes},
                      {"train", s.train_nodes().size()},
                      {"valid", s.valid_nodes().size()},
                      {"test", s.test_nodes().size()},
                      {"degree", degree_stats(s)},
                      {"sections", sections_json(h)},
                      {"metadata", metadata}};
  if (s.part.is_part()) {
    j["part"] = {
        {"index", s.part.index}, {"count", s.part.count}, {"num_global_nodes", s.part.num_global_nodes}};
  }
  return j;
}

void run_info(const InfoOptions& o) {
  LoadOptions load;
  load.threads = o.threads;
  const GraphStore store = load_store(o.file, load);
  const StoreHeader header = read_store_header(o.file);
  nlohmann::json j = info_json(o.file, store, header);
  if (o.components) {
    DGCN_CHECK(!store.part.is_part(), "{}: --components needs the whole graph; this file is part {} of {}",
               o.file, store.part.index, store.part.count);
    const Components c = connected_components(store.graph, resolve_threads(o.threads));
    j["components"] = {{"count", c.count}, {"largest", c.largest}};
  }
  std::printf("%s\n", j.dump().c_str());
}

}  // namespace

void register_info(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "load a .gcn store (checking every checksum and invariant) and print its statistics as JSON");
  cmd->add_option("file", o->file, "the .gcn file")->required();
  cmd->add_option("--threads", o->threads, "threads for loading (0 = all cores)")
      ->check(dgcn::cli::kNonNegative);
  cmd->add_flag(
      "--components", o->components,
      "also count the connected components (a directed graph's weak ones) and the largest one's size");
  cmd->callback([o] { run_info(*o); });
}

}  // namespace dgcn::prep
