#include "train/open_data.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <utility>

#include "base/error.h"
#include "datasets/synthetic.h"
#include "partition/part_loading.h"

namespace dgcn {
namespace {

LoadOptions load_options(const DataSource& s, const OpenSettings& settings, bool partition) {
  LoadOptions load;
  load.threads = settings.threads;
  const bool shared = s.load == LoadPolicy::kShared ||
                      (s.load == LoadPolicy::kAuto && !partition && settings.local_world_size > 1);
  load.mode = shared ? LoadMode::kSharedCache : LoadMode::kPrivate;
  load.cache_dir = s.cache_dir;
  return load;
}

}  // namespace

LoadPolicy parse_load_policy(const std::string& name) {
  if (name == "auto") return LoadPolicy::kAuto;
  if (name == "private") return LoadPolicy::kPrivate;
  if (name == "shared") return LoadPolicy::kShared;
  throw Error(fmt::format("load policy '{}': expected auto, private or shared", name));
}

OpenedData open_data(const DataSource& s, Collectives& comm, const OpenSettings& settings) {
  OpenedData out;
  if (s.path.empty()) {
    spdlog::info("no data path: generating the synthetic '{}' preset in memory", s.preset);
    out.store = generate_synthetic(synthetic_preset(s.preset), settings.threads);
    out.path = "synthetic:" + s.preset;
    return out;
  }
  out.path = s.path;
  if (is_partition_dir(s.path)) {
    if (settings.use == DataUse::kTraining) {
      PartitionedData data = load_partition_part(s.path, comm, load_options(s, settings, true));
      out.store = std::move(data.part);
      out.partition = std::move(data.manifest);
      return out;
    }
    // Whole-graph work reads the store the partition was made from.
    const PartitionManifest manifest = read_partition_manifest(s.path);
    DGCN_CHECK(std::filesystem::exists(manifest.source_path),
               "{} is a partitioned graph made from {}, which is gone; this needs the whole store (make it "
               "again with dgcn-prep, or pass it as the data)",
               s.path, manifest.source_path);
    spdlog::info("{} is a partitioned graph: reading the whole store it was made from, {}", s.path,
                 manifest.source_path);
    out.store = load_store(manifest.source_path, load_options(s, settings, false));
    DGCN_CHECK(content_digest(out.store, settings.threads) == manifest.source_digest,
               "{} was made from {} (digest {}), which has changed since; partition it again", s.path,
               manifest.source_path, manifest.source_digest);
    out.path = manifest.source_path;
    return out;
  }
  out.store = load_store(s.path, load_options(s, settings, false));
  DGCN_CHECK(settings.use == DataUse::kTraining || !out.store.part.is_part(),
             "{} is part {} of {} of a partitioned graph; this needs the whole graph: pass the partition's "
             "folder or the store it was made from",
             s.path, out.store.part.index, out.store.part.count);
  return out;
}

}  // namespace dgcn
