#include "train/open_data.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "fixtures.h"
#include "in_process_collectives.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

class OpenData : public ::testing::Test {
 protected:
  void SetUp() override {
    whole_ = testing::community_store();
    store_ = scratch_.file("whole.gcn");
    save_store(whole_, store_);
    parts_ = scratch_.file("parts");
    WritePartitionOptions o;
    o.partition = {.parts = 2, .method = PartitionMethod::kRandom, .seed = 2, .threads = 1};
    o.source_path = store_;
    write_partition(whole_, parts_, o);
  }
  testing::ScratchDir scratch_;
  GraphStore whole_;
  std::string store_, parts_;
  testing::InProcessGroup one_{1};
};

TEST_F(OpenData, AStorePathOpensTheStore) {
  const OpenedData d = open_data({.path = store_}, one_.at(0), {});
  EXPECT_EQ(d.path, store_);
  EXPECT_FALSE(d.partition.has_value());
  EXPECT_EQ(content_digest(d.store, 1), content_digest(whole_, 1));
}

TEST_F(OpenData, NoPathGeneratesThePreset) {
  const OpenedData d = open_data({.preset = "tiny"}, one_.at(0), {});
  EXPECT_EQ(d.path, "synthetic:tiny");
  EXPECT_GT(d.store.num_nodes(), 0);
  EXPECT_THROW(open_data({.preset = "huge"}, one_.at(0), {}), Error);
}

TEST_F(OpenData, TrainingOnAPartitionFolderGivesEachRankItsPart) {
  testing::InProcessGroup two(2);
  std::vector<OpenedData> opened(2);
  testing::run_ranks(2, [&](int rank) {
    opened[static_cast<size_t>(rank)] = open_data({.path = parts_}, two.at(rank), {});
  });
  int64_t nodes = 0;
  for (int rank = 0; rank < 2; ++rank) {
    const OpenedData& d = opened[static_cast<size_t>(rank)];
    ASSERT_TRUE(d.partition.has_value());
    EXPECT_EQ(d.store.part.index, rank);
    EXPECT_EQ(d.path, parts_);
    nodes += d.store.num_nodes();
  }
  EXPECT_EQ(nodes, whole_.num_nodes());
}

TEST_F(OpenData, WholeGraphWorkOnAPartitionFolderReadsItsSource) {
  const OpenedData d = open_data({.path = parts_}, one_.at(0), {.use = DataUse::kWholeGraph});
  EXPECT_FALSE(d.partition.has_value());
  EXPECT_EQ(d.path, store_);
  EXPECT_EQ(content_digest(d.store, 1), content_digest(whole_, 1));
}

TEST_F(OpenData, WholeGraphWorkRefusesAPartFile) {
  const std::string part = (std::filesystem::path(parts_) / part_file_name(0)).string();
  ASSERT_TRUE(std::filesystem::exists(part));
  EXPECT_NO_THROW(open_data({.path = part}, one_.at(0), {}));  // training decides what to do with it
  try {
    open_data({.path = part}, one_.at(0), {.use = DataUse::kWholeGraph});
    FAIL() << "a part is not the whole graph";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is part 0 of 2"), std::string::npos) << e.what();
  }
}

TEST_F(OpenData, WholeGraphWorkNamesASourceThatIsGoneOrChanged) {
  std::filesystem::remove(store_);
  try {
    open_data({.path = parts_}, one_.at(0), {.use = DataUse::kWholeGraph});
    FAIL() << "the source is gone";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("which is gone"), std::string::npos) << e.what();
  }
  save_store(testing::community_store(Task::kMultiLabel), store_);
  try {
    open_data({.path = parts_}, one_.at(0), {.use = DataUse::kWholeGraph});
    FAIL() << "the source changed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has changed since"), std::string::npos) << e.what();
  }
}

TEST(LoadPolicy, ParsesItsThreeNames) {
  EXPECT_EQ(parse_load_policy("auto"), LoadPolicy::kAuto);
  EXPECT_EQ(parse_load_policy("private"), LoadPolicy::kPrivate);
  EXPECT_EQ(parse_load_policy("shared"), LoadPolicy::kShared);
  EXPECT_THROW(parse_load_policy("mapped"), Error);
}

}  // namespace
}  // namespace dgcn
