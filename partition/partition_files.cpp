#include "partition/partition_files.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/error.h"
#include "base/file_io.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "graph/store_header.h"

namespace dgcn {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "dgcn-partition";
constexpr int kFormatVersion = 1;

std::string partition_id_of(const std::string& source_digest, std::span<const int32_t> owner, int parts) {
  Digest d;
  d.update(source_digest.data(), source_digest.size());
  d.update_value(static_cast<int64_t>(parts));
  d.update(owner.data(), owner.size_bytes());
  return d.hex();
}

// A manifest is a few hundred bytes per part; a file far larger is not one.
constexpr uint64_t kMaxManifestBytes = uint64_t{64} << 20;

std::string read_manifest_text(const std::string& path) {
  UniqueFd fd = open_read(path);
  const uint64_t size = stat_fd(fd.get(), path).size;
  DGCN_CHECK(size <= kMaxManifestBytes, "{}: {} bytes, too large for a partition manifest (at most {})", path,
             size, kMaxManifestBytes);
  std::string text(size, '\0');
  pread_all(fd.get(), text.data(), size, 0, path);
  return text;
}

nlohmann::json quality_json(const PartitionQuality& q) {
  return {{"cut_entries", q.cut_entries},     {"cut_fraction", q.cut_fraction},
          {"node_balance", q.node_balance},   {"train_balance", q.train_balance},
          {"entry_balance", q.entry_balance}, {"nodes", q.nodes},
          {"train_nodes", q.train_nodes},     {"entries", q.entries}};
}

nlohmann::json manifest_json(const PartitionManifest& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : m.files) {
    files.push_back({{"file", f.file},
                     {"digest", f.digest},
                     {"nodes", f.nodes},
                     {"entries", f.entries},
                     {"train", f.train}});
  }
  return {{"format", kFormat},
          {"version", kFormatVersion},
          {"parts", m.parts},
          {"method", m.method},
          {"seed", m.seed},
          {"partition_id", m.partition_id},
          {"source",
           {{"path", m.source_path},
            {"digest", m.source_digest},
            {"num_nodes", m.num_nodes},
            {"num_edges", m.num_edges}}},
          {"files", files},
          {"quality", m.quality}};
}

// Field access with errors that name the manifest and the field.
class ManifestReader {
 public:
  explicit ManifestReader(std::string path) : path_(std::move(path)) {}

  const nlohmann::json& at(const nlohmann::json& j, const char* key, const std::string& where) const {
    DGCN_CHECK(j.is_object() && j.contains(key), "{}: {} has no field '{}'", path_, where, key);
    return j.at(key);
  }
  std::string string(const nlohmann::json& j, const char* key, const std::string& where) const {
    const auto& v = at(j, key, where);
    DGCN_CHECK(v.is_string(), "{}: {}.{} must be a string (got {})", path_, where, key, v.type_name());
    return v.get<std::string>();
  }
  int64_t integer(const nlohmann::json& j, const char* key, const std::string& where, int64_t lo,
                  int64_t hi) const {
    const auto& v = at(j, key, where);
    DGCN_CHECK(v.is_number_integer(), "{}: {}.{} must be an integer (got {})", path_, where, key,
               v.type_name());
    // Unsigned values above INT64_MAX are out of range too.
    DGCN_CHECK(!(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) &&
                   v.get<int64_t>() >= lo && v.get<int64_t>() <= hi,
               "{}: {}.{} = {} is outside [{}, {}]", path_, where, key, v.dump(), lo, hi);
    return v.get<int64_t>();
  }
  std::string digest(const nlohmann::json& j, const char* key, const std::string& where) const {
    std::string s = string(j, key, where);
    const bool hex = s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
    DGCN_CHECK(hex, "{}: {}.{} = \"{}\" is not a 16-digit hex digest", path_, where, key, s.substr(0, 40));
    return s;
  }

 private:
  std::string path_;
};

}  // namespace

std::string part_file_name(int index) {
  return fmt::format("part-{:03d}.gcn", index);
}

bool is_partition_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / kPartitionManifest, ec);
}

std::string part_path(const std::string& dir, const PartitionManifest& m, int index) {
  DGCN_CHECK(index >= 0 && index < m.parts, "partition {}: no part {} (it has {})", dir, index, m.parts);
  return (fs::path(dir) / m.files[static_cast<size_t>(index)].file).string();
}

PartitionManifest read_partition_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / kPartitionManifest).string();
  std::error_code ec;
  DGCN_CHECK(fs::is_directory(dir, ec),
             "{}: not a folder (a partitioned graph is a folder made by dgcn-prep "
             "partition)",
             dir);
  DGCN_CHECK(fs::exists(path, ec), "{}: no {} here: not a partitioned graph (dgcn-prep partition makes one)",
             dir, kPartitionManifest);
  const std::string text = read_manifest_text(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  ManifestReader r(path);
  DGCN_CHECK(j.is_object(), "{}: the manifest must be a JSON object (got {})", path, j.type_name());
  DGCN_CHECK(r.string(j, "format", "the manifest") == kFormat, "{}: format is not \"{}\"", path, kFormat);
  const int64_t version = r.integer(j, "version", "the manifest", 0, INT32_MAX);
  DGCN_CHECK(version == kFormatVersion, "{}: manifest version {}, this build reads version {}", path, version,
             kFormatVersion);
  PartitionManifest m;
  m.parts = static_cast<int>(r.integer(j, "parts", "the manifest", 1, detail::kMaxParts));
  m.method = r.string(j, "method", "the manifest");
  m.seed = static_cast<uint64_t>(r.integer(j, "seed", "the manifest", 0, INT64_MAX));
  m.partition_id = r.digest(j, "partition_id", "the manifest");
  const auto& source = r.at(j, "source", "the manifest");
  m.source_path = r.string(source, "path", "source");
  m.source_digest = r.digest(source, "digest", "source");
  m.num_nodes = r.integer(source, "num_nodes", "source", m.parts, INT64_MAX);
  m.num_edges = r.integer(source, "num_edges", "source", 0, INT64_MAX);
  const auto& files = r.at(j, "files", "the manifest");
  DGCN_CHECK(files.is_array() && files.size() == static_cast<size_t>(m.parts),
             "{}: files must list one entry per part ({}), got {}", path, m.parts,
             files.is_array() ? std::to_string(files.size()) : std::string(files.type_name()));
  for (int i = 0; i < m.parts; ++i) {
    const std::string where = fmt::format("files[{}]", i);
    const auto& f = files[static_cast<size_t>(i)];
    PartFileEntry e;
    e.file = r.string(f, "file", where);
    // Only the expected name: a manifest cannot point outside its folder.
    DGCN_CHECK(e.file == part_file_name(i), "{}: {}.file is \"{}\", expected \"{}\"", path, where,
               e.file.substr(0, 80), part_file_name(i));
    e.digest = r.digest(f, "digest", where);
    e.nodes = r.integer(f, "nodes", where, 1, m.num_nodes);
    e.entries = r.integer(f, "entries", where, 0, m.num_edges);
    e.train = r.integer(f, "train", where, 0, e.nodes);
    m.files.push_back(std::move(e));
  }
  if (j.contains("quality")) m.quality = j.at("quality");
  return m;
}

void check_part(const GraphStore& part, const PartitionManifest& m, int index, const std::string& path,
                int threads) {
  DGCN_CHECK(part.part.is_part(), "{}: a whole graph, not a part of a partitioned graph", path);
  DGCN_CHECK(
      part.part.count == m.parts && part.part.index == index,
      "{}: this file is part {} of {}, but the manifest lists it as part {} of {} (a part file put in the "
      "wrong place?)",
      path, part.part.index, part.part.count, index, m.parts);
  std::string id;
  try {
    id = nlohmann::json::parse(part.metadata_json).at("partition").at("id").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    id = "(none)";
  }
  DGCN_CHECK(id == m.partition_id,
             "{}: this part comes from another partition run (its partition id is {}, the manifest's is {}); "
             "partition the graph again into a fresh folder",
             path, id, m.partition_id);
  const std::string digest = content_digest(part, threads);
  DGCN_CHECK(digest == m.files[static_cast<size_t>(index)].digest,
             "{}: its content digest is {} but the manifest recorded {} (the data was changed or replaced)",
             path, digest, m.files[static_cast<size_t>(index)].digest);
}

WritePartitionResult write_partition(const GraphStore& whole, const std::string& dir,
                                     const WritePartitionOptions& o) {
  const int threads = resolve_threads(o.partition.threads);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    DGCN_CHECK(fs::is_directory(dir, ec), "partition: --out {} exists and is not a folder", dir);
    DGCN_CHECK(fs::is_empty(dir, ec),
               "partition: --out {} is not empty; give a new or empty folder (nothing in it was changed)",
               dir);
  }
  // Built in a temporary sibling folder and renamed onto `dir` at the end, so
  // a failure or a signal at any moment leaves `dir` as it was (AtomicFolder).
  AtomicFolder folder(dir);
  WritePartitionResult result;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> owner_vector = assign_parts(whole, o.partition);
  result.assign_seconds = seconds_since(t0);
  const Buffer owner = Buffer::from_vector(std::move(owner_vector));
  const auto owner_span = owner.as<int32_t>();
  result.quality = partition_quality(whole, owner_span, o.partition.parts, threads);

  t0 = std::chrono::steady_clock::now();
  PartitionManifest& m = result.manifest;
  m.parts = o.partition.parts;
  m.method = partition_method_name(o.partition.method);
  m.seed = o.partition.seed;
  m.source_path = o.source_path;
  m.source_digest = content_digest(whole, threads);
  m.num_nodes = whole.num_nodes();
  m.num_edges = whole.num_edges();
  m.partition_id = partition_id_of(m.source_digest, owner_span, m.parts);
  m.quality = quality_json(result.quality);
  nlohmann::json source_metadata;
  try {
    source_metadata = nlohmann::json::parse(whole.metadata_json);
  } catch (const nlohmann::json::exception&) {
    source_metadata = whole.metadata_json;  // kept verbatim as a string
  }
  for (int p = 0; p < m.parts; ++p) {
    const nlohmann::json metadata = {{"partition",
                                      {{"id", m.partition_id},
                                       {"index", p},
                                       {"count", m.parts},
                                       {"method", m.method},
                                       {"seed", m.seed},
                                       {"source_digest", m.source_digest}}},
                                     {"source", source_metadata}};
    const GraphStore part = extract_part(whole, owner, p, m.parts, metadata.dump(), threads);
    const std::string file = part_file_name(p);
    const std::string path = (fs::path(dir) / file).string();
    result.file_bytes += save_store(part, (fs::path(folder.path()) / file).string(), o.save).file_bytes;
    m.files.push_back({file, content_digest(part, threads), part.num_nodes(), part.num_edges(),
                       static_cast<int64_t>(part.train_nodes().size())});
    if (o.progress) {
      o.progress(fmt::format("wrote {}: {} nodes, {} CSR entries, {} training nodes", path, part.num_nodes(),
                             part.num_edges(), part.train_nodes().size()));
    }
  }
  write_file_atomically((fs::path(folder.path()) / kPartitionManifest).string(),
                        manifest_json(m).dump(2) + "\n");
  folder.commit();
  result.write_seconds = seconds_since(t0);
  return result;
}

}  // namespace dgcn
