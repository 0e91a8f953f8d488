// partition/partition_files: a partition folder is written whole (parts and
// manifest), read back checked, and every lie in it named.
#include "partition/partition_files.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "fixtures.h"
#include "graph/store_test_util.h"
#include "in_process_collectives.h"
#include "partition/part_loading.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

using testing::error_of;

using testing::contains;

class PartitionFolder : public ::testing::Test {
 protected:
  void SetUp() override { whole_ = testing::community_store(); }
  WritePartitionResult write(const std::string& dir, int parts,
                             PartitionMethod method = PartitionMethod::kMetis) {
    WritePartitionOptions o;
    o.partition = {.parts = parts, .method = method, .seed = 2, .threads = 2};
    o.source_path = "community.gcn";
    return write_partition(whole_, dir, o);
  }
  void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& change) {
    const std::string path = dir + "/partition.json";
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in);
    change(j);
    std::ofstream(path) << j.dump();
  }
  testing::ScratchDir scratch_;
  GraphStore whole_;
};

TEST_F(PartitionFolder, WritesPartsAndAManifestThatCheckOut) {
  const std::string dir = scratch_.file("parts");
  const WritePartitionResult r = write(dir, 3);
  EXPECT_TRUE(is_partition_dir(dir));
  EXPECT_FALSE(is_partition_dir(scratch_.path()));
  const PartitionManifest m = read_partition_manifest(dir);
  EXPECT_EQ(m.parts, 3);
  EXPECT_EQ(m.method, "metis");
  EXPECT_EQ(m.partition_id, r.manifest.partition_id);
  EXPECT_EQ(m.source_digest, content_digest(whole_, 2));
  int64_t nodes = 0;
  for (int p = 0; p < 3; ++p) {
    const GraphStore part = load_store(part_path(dir, m, p));
    check_part(part, m, p, part_path(dir, m, p), 2);
    nodes += part.num_nodes();
    EXPECT_EQ(m.files[static_cast<size_t>(p)].nodes, part.num_nodes());
  }
  EXPECT_EQ(nodes, whole_.num_nodes());
  EXPECT_EQ(m.quality.at("cut_entries").get<int64_t>(), r.quality.cut_entries);
}

TEST_F(PartitionFolder, APartFromElsewhereIsNamedForWhatItIs) {
  const std::string a = scratch_.file("a"), b = scratch_.file("b");
  write(a, 2);
  write(b, 2, PartitionMethod::kRandom);
  const PartitionManifest m = read_partition_manifest(a);
  auto error_loading = [&](int index) {
    return error_of(
        [&] { check_part(load_store(part_path(a, m, index)), m, index, part_path(a, m, index), 2); });
  };
  // Another partition run's part 1 in its place.
  std::filesystem::copy_file(b + "/part-001.gcn", a + "/part-001.gcn",
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(contains(error_loading(1), "comes from another partition run")) << error_loading(1);
  // Part 0 put where part 1 belongs.
  std::filesystem::copy_file(a + "/part-000.gcn", a + "/part-001.gcn",
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(contains(error_loading(1), "this file is part 0 of 2, but the manifest lists it as part 1"))
      << error_loading(1);
  // A damaged byte in part 0's data.
  std::vector<char> bytes = testing::read_bytes(a + "/part-000.gcn");
  bytes[bytes.size() - 100] ^= 0x10;
  testing::write_bytes(a + "/part-000.gcn", bytes);
  EXPECT_FALSE(error_loading(0).empty());
  // A missing part.
  std::filesystem::remove(a + "/part-000.gcn");
  EXPECT_TRUE(contains(error_loading(0), "part-000.gcn")) << error_loading(0);
}

TEST_F(PartitionFolder, ABadManifestIsNamedField) {
  const std::string dir = scratch_.file("p");
  write(dir, 2);
  auto error_after = [&](const std::function<void(nlohmann::json&)>& change) {
    const std::string copy = scratch_.file("copy");
    std::filesystem::remove_all(copy);
    std::filesystem::copy(dir, copy);
    edit_manifest(copy, change);
    return error_of([&] { read_partition_manifest(copy); });
  };
  EXPECT_TRUE(contains(error_after([](nlohmann::json& j) { j["files"][1]["file"] = "../../etc/passwd"; }),
                       "files[1].file is \"../../etc/passwd\", expected \"part-001.gcn\""));
  EXPECT_TRUE(
      contains(error_after([](nlohmann::json& j) { j.erase("partition_id"); }), "no field 'partition_id'"));
  EXPECT_TRUE(
      contains(error_after([](nlohmann::json& j) { j["parts"] = 3; }), "one entry per part (3), got 2"));
  EXPECT_TRUE(
      contains(error_after([](nlohmann::json& j) { j["parts"] = "two"; }), "parts must be an integer"));
  EXPECT_TRUE(contains(error_after([](nlohmann::json& j) { j["source"]["digest"] = "xyz"; }),
                       "is not a 16-digit hex digest"));
  EXPECT_TRUE(contains(error_after([](nlohmann::json& j) { j["files"][0]["nodes"] = -4; }),
                       "files[0].nodes = -4 is outside"));
  EXPECT_TRUE(
      contains(error_after([](nlohmann::json& j) { j = nlohmann::json::array(); }), "must be a JSON object"));
  const std::string broken = scratch_.file("broken");
  std::filesystem::create_directory(broken);
  std::ofstream(broken + "/partition.json") << "{\"format\": ";
  EXPECT_TRUE(contains(error_of([&] { read_partition_manifest(broken); }), "not valid JSON"));
  EXPECT_TRUE(
      contains(error_of([&] { read_partition_manifest(scratch_.path()); }), "no partition.json here"));
}

TEST_F(PartitionFolder, AnOutputFolderInUseIsLeftAlone) {
  const std::string dir = scratch_.file("used");
  std::filesystem::create_directory(dir);
  std::ofstream(dir + "/notes.txt") << "mine";
  EXPECT_TRUE(contains(error_of([&] { write(dir, 2); }), "is not empty"));
  EXPECT_EQ(std::filesystem::directory_iterator(dir)->path().filename(), "notes.txt");
  // A failed run (more parts than nodes) leaves no folder behind.
  const std::string fresh = scratch_.file("fresh");
  EXPECT_THROW(write(fresh, 500), Error);
  EXPECT_FALSE(std::filesystem::exists(fresh));
  // Nor its temporary sibling folder (AtomicFolder).
  EXPECT_EQ(testing::ScratchDir::entries_of(scratch_.path()), std::vector<std::string>{"used"});
}

}  // namespace
}  // namespace dgcn
