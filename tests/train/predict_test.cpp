// The rules train/predict.h owns, called as a library: which nodes a spec
// names (source ids mapped through the store), what the files hold and how
// they agree with each other and with the summary, and the option errors.
#include "train/predict.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "base/error.h"
#include "datasets/npy.h"
#include "distributed/process_group.h"
#include "fixtures.h"
#include "scratch_dir.h"
#include "tiny_job.h"
#include "train/open_data.h"
#include "train/train_job.h"

namespace dgcn {
namespace {

std::vector<int64_t> read_ids(const std::string& path) {
  return to_int64(read_npy_file(path), path);
}

std::vector<float> read_floats(const std::string& path) {
  const NpyArray a = read_npy_file(path);
  const auto f = a.data.as<float>();
  return {f.begin(), f.end()};
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A GCN trained two epochs on the tiny preset, and that store.
class Predict : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new testing::ScratchDir;
    TrainJobOptions job = testing::tiny_job();
    job.checkpoint_dir = scratch_->file("ckpt");
    group_ = ProcessGroup::create(RankEnv{}, {}).release();
    best_epoch_ = run_train_job(job, *group_).train.best_epoch;
    store_ = new GraphStore(open_data(job.data, *group_, {}).store);
  }
  static void TearDownTestSuite() {
    group_->shutdown();
    delete group_;
    delete store_;
    delete scratch_;
  }

  PredictOptions options(const std::string& out) const {
    PredictOptions o;
    o.checkpoint = scratch_->file("ckpt");
    o.out = scratch_->file(out);
    return o;
  }

  static testing::ScratchDir* scratch_;
  static ProcessGroup* group_;
  static GraphStore* store_;
  static int64_t best_epoch_;
};
testing::ScratchDir* Predict::scratch_ = nullptr;
ProcessGroup* Predict::group_ = nullptr;
GraphStore* Predict::store_ = nullptr;
int64_t Predict::best_epoch_ = -1;

TEST_F(Predict, TheFilesAgreeWithEachOtherAndTheSummaryWithTheLabels) {
  PredictOptions o = options("test");
  o.what = {"class", "probs", "logits", "embeddings"};
  const nlohmann::json s = predict(*store_, o, *group_, 1);
  const std::vector<int64_t> nodes = read_ids(o.out + ".node_ids.npy");
  ASSERT_EQ(nodes, std::vector<int64_t>(store_->test_nodes().begin(), store_->test_nodes().end()));
  const auto n = static_cast<int64_t>(nodes.size());
  EXPECT_EQ(s["rows"], n);
  EXPECT_EQ(s["epoch"], best_epoch_) << "a checkpoint folder: its best.pt";
  EXPECT_EQ(s["files"].size(), 5u);

  const std::vector<int64_t> cls = read_ids(o.out + ".class.npy");
  const std::vector<float> probs = read_floats(o.out + ".probs.npy"),
                           logits = read_floats(o.out + ".logits.npy");
  const int64_t c = store_->num_classes;
  ASSERT_EQ(static_cast<int64_t>(probs.size()), n * c);
  int64_t correct = 0, labelled = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data() + i * c;
    EXPECT_EQ(cls[i], std::max_element(row, row + c) - row) << "class is the argmax of the logits, row " << i;
    const double sum = std::accumulate(probs.begin() + i * c, probs.begin() + (i + 1) * c, 0.0);
    EXPECT_NEAR(sum, 1.0, 1e-5) << "softmax row " << i;
    labelled += store_->label(nodes[i]) >= 0;
    correct += cls[i] == store_->label(nodes[i]);
  }
  ASSERT_GT(labelled, 0);
  EXPECT_DOUBLE_EQ(s["acc"].get<double>(), static_cast<double>(correct) / static_cast<double>(labelled));
  EXPECT_EQ(s["labelled"], labelled);
  EXPECT_EQ(read_npy_file(o.out + ".embeddings.npy").shape(), (std::vector<int64_t>{n, 16}));
}

TEST_F(Predict, TheSameNodesGiveTheSameRowsWhateverTheSetTheyAreIn) {
  PredictOptions all = options("all"), test = options("test-only");
  all.nodes = "all";
  all.what = test.what = {"logits"};
  predict(*store_, all, *group_, 1);
  predict(*store_, test, *group_, 1);
  const std::vector<float> every = read_floats(all.out + ".logits.npy"),
                           some = read_floats(test.out + ".logits.npy");
  const int64_t c = store_->num_classes;
  const std::vector<int64_t> ids = read_ids(test.out + ".node_ids.npy");
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t k = 0; k < c; ++k) EXPECT_EQ(some[i * c + k], every[ids[i] * c + k]) << ids[i];
  }
}

TEST_F(Predict, BadOptionsAreErrorsNamingWhatIsWrong) {
  PredictOptions o = options("bad");
  o.what = {};
  EXPECT_NE(error_of([&] { predict(*store_, o, *group_, 1); }).find("nothing to write"), std::string::npos);
  o.what = {"class", "labels"};
  EXPECT_NE(error_of([&] { predict(*store_, o, *group_, 1); }).find("'labels' is not an output"),
            std::string::npos);
  o.what = {"embeddings"};
  o.layer = 7;
  EXPECT_NE(error_of([&] { predict(*store_, o, *group_, 1); }).find("layer 7 has no embeddings"),
            std::string::npos);
  o = options("other-store");
  const GraphStore other = testing::community_store();  // other features than the preset's 16
  ASSERT_NE(other.num_features, store_->num_features);
  EXPECT_NE(error_of([&] { predict(other, o, *group_, 1); }).find("the model reads"), std::string::npos);
  o.checkpoint = scratch_->file("no-such-folder");
  EXPECT_NE(error_of([&] { predict(*store_, o, *group_, 1); }), "(no error)");
}

TEST(ResolveNodes, NamedSetsAndFilesOfSourceIds) {
  testing::ScratchDir dir;
  GraphStore store = testing::community_store();
  EXPECT_EQ(resolve_nodes(store, "all").size(), static_cast<size_t>(store.num_nodes()));
  EXPECT_EQ(resolve_nodes(store, "valid"),
            std::vector<int64_t>(store.valid_nodes().begin(), store.valid_nodes().end()));

  const std::string ids = dir.file("ids.npy");
  std::vector<int64_t> wanted{7, 3, 7};
  write_npy(ids, DType::kInt64, {3}, wanted.data());
  EXPECT_EQ(resolve_nodes(store, ids), wanted) << "no source ids: the file holds store ids, repeats kept";
  std::vector<int64_t> outside{2, store.num_nodes()};
  write_npy(ids, DType::kInt64, {2}, outside.data());
  EXPECT_NE(
      error_of([&] { resolve_nodes(store, ids); }).find("entry 1 is node 400, not in the store's [0, 400)"),
      std::string::npos);

  // After a reordering the store keeps each node's source id: the file's ids
  // are those, mapped back to rows.
  std::vector<int64_t> source(static_cast<size_t>(store.num_nodes()));
  for (int64_t v = 0; v < store.num_nodes(); ++v) source[v] = 1000 + (store.num_nodes() - 1 - v);
  store.source_ids = Buffer::from_vector(std::move(source));
  std::vector<int64_t> by_source{1000, 1399};
  write_npy(ids, DType::kInt64, {2}, by_source.data());
  EXPECT_EQ(resolve_nodes(store, ids), (std::vector<int64_t>{399, 0}));
  std::vector<int64_t> unknown{5};
  write_npy(ids, DType::kInt64, {1}, unknown.data());
  EXPECT_NE(
      error_of([&] { resolve_nodes(store, ids); }).find("entry 0 is node 5, which the store does not hold"),
      std::string::npos);

  std::vector<int64_t> matrix{1, 2, 3, 4};
  write_npy(ids, DType::kInt64, {2, 2}, matrix.data());
  EXPECT_NE(error_of([&] { resolve_nodes(store, ids); }).find("expected a vector of node ids"),
            std::string::npos);
}

}  // namespace
}  // namespace dgcn
