#include "graph/store_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "fixtures.h"
#include "graph/store_header.h"
#include "store_test_util.h"

namespace dgcn {
namespace {

using testing::digest_of;
using testing::error_of;
using testing::ScratchDir;

using testing::contains;

// Small frames and no size threshold, so tiny fixtures still get several
// zstd frames per section.
SaveOptions small_frames(bool all_raw, int threads = 2) {
  SaveOptions o;
  o.all_raw = all_raw;
  o.threads = threads;
  o.frame_bytes = 100;  // not a multiple of 8: frames are byte ranges, not rows
  o.zstd_min_bytes = 0;
  return o;
}

GraphStore load(const std::string& path) {
  LoadOptions o;
  o.threads = 2;
  return load_store(path, o);
}

void rewrite_header(const std::string& path, const StoreHeader& h) {
  std::vector<char> bytes = testing::read_bytes(path);
  std::vector<std::byte> header = detail::encode_header(h);
  ASSERT_LE(header.size(), bytes.size());
  std::memcpy(bytes.data(), header.data(), header.size());
  testing::write_bytes(path, bytes);
}

struct RoundTripCase {
  const char* name;
  bool all_raw;
  bool int64_ids;
  bool multi_label;
};

class StoreRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(StoreRoundTrip, LoadsBackTheSameStore) {
  const RoundTripCase c = GetParam();
  GraphStore s = testing::make_store(testing::cycle_edges(300), 5, 4);
  if (c.int64_ids) s = testing::with_int64_ids(std::move(s));
  if (c.multi_label) s = testing::with_multi_labels(std::move(s));
  s.metadata_json = R"({"reader":"test","seed":7})";
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  SaveResult saved = save_store(s, path, small_frames(c.all_raw));
  EXPECT_EQ(saved.file_bytes, std::filesystem::file_size(path));

  StoreHeader h = read_store_header(path);
  EXPECT_EQ(h.sections.size(), 8u);
  EXPECT_EQ(saved.raw_bytes, h.raw_bytes());
  for (const auto& sec : h.sections) {
    EXPECT_EQ(sec.codec, c.all_raw ? StoreCodec::kRaw : StoreCodec::kZstd) << sec.name;
    EXPECT_GT(sec.num_frames, 1u) << sec.name;
  }
  EXPECT_EQ(h.find("indices")->dtype, c.int64_ids ? StoreDtype::kInt64 : StoreDtype::kInt32);

  GraphStore back = load(path);
  EXPECT_EQ(digest_of(back), digest_of(s));
  EXPECT_EQ(back.graph.id_width(), s.graph.id_width());
  EXPECT_EQ(back.metadata_json, s.metadata_json);
}

INSTANTIATE_TEST_SUITE_P(Codecs, StoreRoundTrip,
                         ::testing::Values(RoundTripCase{"zstd", false, false, false},
                                           RoundTripCase{"raw", true, false, false},
                                           RoundTripCase{"zstd_int64", false, true, false},
                                           RoundTripCase{"raw_int64", true, true, false},
                                           RoundTripCase{"zstd_multilabel", false, false, true},
                                           RoundTripCase{"raw_multilabel_int64", true, true, true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(StoreFormat, EmptySectionsAreLeftOutAndLoadBackEmpty) {
  ScratchDir dir;
  // No features, labels or splits; then no edges either; then no nodes.
  testing::EdgeList no_edges{5, {}, {}};
  for (const GraphStore& s : {testing::bare(testing::star_edges(6)), testing::bare(no_edges),
                              testing::bare(testing::EdgeList{0, {}, {}})}) {
    for (bool raw : {false, true}) {
      const std::string path = dir.file("bare.gcn");
      save_store(s, path, small_frames(raw));
      StoreHeader h = read_store_header(path);
      EXPECT_EQ(h.find("features"), nullptr);
      EXPECT_EQ(h.find("labels"), nullptr);
      EXPECT_EQ(h.find("train"), nullptr);
      EXPECT_EQ(h.find("indices") != nullptr, s.num_edges() > 0);
      GraphStore back = load(path);
      EXPECT_EQ(digest_of(back), digest_of(s));
      EXPECT_EQ(back.task, Task::kNone);
    }
  }
}

TEST(StoreFormat, DefaultOptionsKeepSmallSectionsRawAndCompressLargeOnes) {
  GraphStore s = testing::make_store(testing::cycle_edges(20000), 2, 3);
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(s, path);
  StoreHeader h = read_store_header(path);
  EXPECT_EQ(h.find("features")->codec, StoreCodec::kZstd);  // 160 KB
  EXPECT_EQ(h.find("valid")->codec, StoreCodec::kRaw);      // 40 KB, under 64 KiB
  EXPECT_EQ(h.find("valid")->offset % 4096, 0u);
  EXPECT_LT(std::filesystem::file_size(path), h.raw_bytes());
  EXPECT_EQ(digest_of(load(path)), digest_of(s));
}

TEST(StoreFormat, BytesDoNotDependOnTheThreadCount) {
  GraphStore s = testing::make_store(testing::clique_edges(60), 7, 5);
  ScratchDir dir;
  for (bool raw : {false, true}) {
    save_store(s, dir.file("one.gcn"), small_frames(raw, 1));
    save_store(s, dir.file("four.gcn"), small_frames(raw, 4));
    EXPECT_EQ(testing::read_bytes(dir.file("one.gcn")), testing::read_bytes(dir.file("four.gcn"))) << raw;
  }
}

TEST(StoreFormat, VerifyReportsEachSection) {
  GraphStore s = testing::make_store(testing::cycle_edges(300), 5, 4);
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(s, path, small_frames(true));
  VerifyReport good = verify_store(path, 2);
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.sections.size(), 8u);

  const StoreSection features = *read_store_header(path).find("features");
  std::vector<char> bytes = testing::read_bytes(path);
  bytes[features.offset + 250] ^= 0x10;  // frame 2 of 100-byte frames
  testing::write_bytes(path, bytes);
  VerifyReport bad = verify_store(path, 2);
  EXPECT_FALSE(bad.ok());
  for (const auto& c : bad.sections) {
    EXPECT_EQ(c.ok(), c.name != "features") << c.name;
    if (c.name == "features") {
      EXPECT_EQ(c.bad_frames, 1u);
      EXPECT_TRUE(
          contains(c.first_error, "section 'features' frame 2 (raw bytes [200, 300)): checksum mismatch"))
          << c.first_error;
    }
  }
}

// --- damaged and lying files ------------------------------------------------

class StoreBadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::make_store(testing::cycle_edges(300), 5, 4);
    path_ = dir_.file("s.gcn");
  }
  std::string save_and_load_error(bool raw = false) {
    save_store(store_, path_, small_frames(raw));
    return error_of([&] { load(path_); });
  }
  std::string load_error() {
    return error_of([&] { load(path_); });
  }
  ScratchDir dir_;
  GraphStore store_;
  std::string path_;
};

TEST_F(StoreBadFile, TruncatedFile) {
  save_store(store_, path_, small_frames(false));
  const std::vector<char> bytes = testing::read_bytes(path_);
  for (size_t keep : {size_t{0}, size_t{60}, size_t{500}, bytes.size() - 1}) {
    testing::write_bytes(path_, {bytes.begin(), bytes.begin() + static_cast<long>(keep)});
    std::string e = load_error();
    EXPECT_TRUE(contains(e, path_)) << e;
    EXPECT_TRUE(contains(e, "truncated")) << keep << ": " << e;
  }
}

TEST_F(StoreBadFile, FlippedByteNamesTheSection) {
  for (bool raw : {true, false}) {
    save_store(store_, path_, small_frames(raw));
    const StoreSection labels = *read_store_header(path_).find("labels");
    std::vector<char> bytes = testing::read_bytes(path_);
    bytes[labels.offset + labels.stored_size / 2] ^= 0x01;
    testing::write_bytes(path_, bytes);
    std::string e = load_error();
    EXPECT_TRUE(contains(e, path_ + ": section 'labels' frame")) << e;
    // A raw frame can only fail its checksum; a zstd frame may also fail to decode.
    if (raw) {
      EXPECT_TRUE(contains(e, "checksum mismatch (stored")) << e;
    }
  }
}

TEST_F(StoreBadFile, WrongMagicAndVersion) {
  save_store(store_, path_, small_frames(false));
  std::vector<char> bytes = testing::read_bytes(path_);
  std::vector<char> magic = bytes;
  magic[1] = 'X';
  testing::write_bytes(path_, magic);
  EXPECT_TRUE(contains(load_error(), "not a .gcn file: magic bytes are 89 58 43 4e")) << load_error();
  std::vector<char> version = bytes;
  version[8] = 2;
  testing::write_bytes(path_, version);
  EXPECT_TRUE(contains(load_error(), "format version 2, this build reads version 1")) << load_error();
}

TEST_F(StoreBadFile, CorruptHeaderFailsItsChecksum) {
  save_store(store_, path_, small_frames(false));
  std::vector<char> bytes = testing::read_bytes(path_);
  bytes[detail::kFixedHeaderBytes + 60] ^= 0x04;  // raw_size of the first section entry
  testing::write_bytes(path_, bytes);
  EXPECT_TRUE(contains(load_error(), "header checksum mismatch")) << load_error();
}

TEST_F(StoreBadFile, SectionBeyondTheFileIsRejectedBeforeAllocating) {
  save_store(store_, path_, small_frames(false));
  StoreHeader h = read_store_header(path_);
  h.sections[2].stored_size = uint64_t{1} << 40;  // features, 1 TiB
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "section 'features': 1099511627776 bytes at offset")) << load_error();
  EXPECT_TRUE(contains(load_error(), "lie beyond the end of the")) << load_error();
}

TEST_F(StoreBadFile, HugeNodeCountIsRejectedBeforeAllocating) {
  save_store(store_, path_, small_frames(false));
  StoreHeader h = read_store_header(path_);
  h.num_nodes = int64_t{1} << 40;
  h.id_width = IdWidth::k64;
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "section 'indptr': shape [301, 1], expected [1099511627777, 1]"))
      << load_error();
}

TEST_F(StoreBadFile, ZstdFrameAnnouncingMoreThanZstdCanProduce) {
  store_ = testing::make_store(testing::cycle_edges(256), 256, 4);
  std::fill_n(testing::damage<float>(store_.features).data(), 256 * 256, 0.0f);  // 256 KiB of zeros
  SaveOptions o;
  o.zstd_min_bytes = 0;
  save_store(store_, path_, o);
  StoreHeader h = read_store_header(path_);
  StoreSection& f = h.sections[2];
  ASSERT_EQ(f.name, "features");
  ASSERT_EQ(f.num_frames, 1u);
  f.stored_size = 1;
  h.frames[f.first_frame].stored_size = 1;
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "zstd frame 0 announces 262144 raw bytes from 1 stored bytes"))
      << load_error();
}

TEST_F(StoreBadFile, OverlappingSections) {
  save_store(store_, path_, small_frames(false));
  StoreHeader h = read_store_header(path_);
  h.sections[1].offset = h.sections[0].offset + 8;  // indices starts inside indptr
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "sections 'indptr' [")) << load_error();
  EXPECT_TRUE(contains(load_error(), "overlap")) << load_error();
}

TEST_F(StoreBadFile, InconsistentFrameTable) {
  save_store(store_, path_, small_frames(false));
  StoreHeader h = read_store_header(path_);
  h.frames[h.sections[3].first_frame].stored_size += 1;  // labels
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "section 'labels': frames store")) << load_error();
}

TEST_F(StoreBadFile, UnknownCodecAndDtype) {
  save_store(store_, path_, small_frames(false));
  const StoreHeader good = read_store_header(path_);
  StoreHeader h = good;
  h.sections[4].codec = static_cast<StoreCodec>(7);
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "section 'train': unknown codec code 7")) << load_error();
  h = good;
  h.sections[2].dtype = StoreDtype::kInt64;
  rewrite_header(path_, h);
  EXPECT_TRUE(contains(load_error(), "section 'features': dtype code 2 (int64), expected float32"))
      << load_error();
}

TEST_F(StoreBadFile, NonMonotoneIndptr) {
  testing::damage<int64_t>(store_.graph.indptr_buffer())[3] = 100;
  std::string e = save_and_load_error();
  EXPECT_TRUE(contains(e, path_ + ": indptr is not monotone: indptr[3] = 100 > indptr[4] = 8")) << e;
}

TEST_F(StoreBadFile, IdOutOfRange) {
  testing::damage<int32_t>(store_.graph.indices_buffer())[17] = 300;
  std::string e = save_and_load_error(true);
  EXPECT_TRUE(contains(e, path_ + ": indices[17] = 300 is not a node id in [0, 300)")) << e;
}

TEST_F(StoreBadFile, NanFeature) {
  testing::damage<float>(store_.features)[5 * 5 + 1] = std::numeric_limits<float>::quiet_NaN();
  std::string e = save_and_load_error();
  EXPECT_TRUE(contains(e, path_ + ": feature [node 5, column 1] is nan")) << e;
}

TEST_F(StoreBadFile, LabelNotAClass) {
  testing::damage<int32_t>(store_.labels)[6] = 4;
  std::string e = save_and_load_error();
  EXPECT_TRUE(contains(e, path_ + ": label of node 6 is 4, expected a class in [0, 4)")) << e;
}

// --- writing ------------------------------------------------------------------

TEST(StoreSave, FailureLeavesAnExistingFileUntouchedAndNoTemporaryFile) {
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  GraphStore good = testing::make_store(testing::eight_node_edges());
  save_store(good, path);
  const std::vector<char> before = testing::read_bytes(path);

  GraphStore bad = good;
  bad.num_features = 5;  // the features array holds 4 per node
  std::string e = error_of([&] { save_store(bad, path); });
  EXPECT_TRUE(
      contains(e, "save_store " + path + ": features has 128 bytes, expected [8 x 5] float32 = 160 bytes"))
      << e;
  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"s.gcn"});

  e = error_of([&] { save_store(good, dir.file("no/such/dir/s.gcn")); });
  EXPECT_TRUE(contains(e, "cannot write " + dir.file("no/such/dir/s.gcn"))) << e;
}

TEST(StoreSave, OverwritesAtomically) {
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(testing::make_store(testing::eight_node_edges()), path);
  GraphStore other = testing::make_store(testing::cycle_edges(40), 3, 2);
  save_store(other, path);
  EXPECT_EQ(digest_of(load(path)), digest_of(other));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"s.gcn"});
}

}  // namespace
}  // namespace dgcn
