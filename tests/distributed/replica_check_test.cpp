// The replica check's exchange and messages, with N threads standing in for
// N ranks (tests/in_process_collectives.h); ddp_test.cpp runs it between
// processes.
#include "distributed/replica_check.h"

#include <gtest/gtest.h>

#include "in_process_collectives.h"

namespace dgcn {
namespace {

// Runs check_replicas on one thread per rank; returns each rank's result.
std::vector<std::string> check_on_threads(const std::vector<std::vector<ReplicaField>>& fields_of_rank) {
  const int n = static_cast<int>(fields_of_rank.size());
  testing::InProcessGroup group(n);
  std::vector<std::string> results(n);
  testing::run_ranks(n, [&](int r) { results[r] = check_replicas(group.at(r), fields_of_rank[r]); });
  return results;
}

std::vector<ReplicaField> model_fields(const std::string& digest) {
  return {{"data.digest", digest},
          {"model.hidden", "128"},
          {"sampling.fanouts", "[15,10,5]"},
          {"param layers.0.weight", "[100, 128] Float"},
          {"param head.weight", "[47, 128] Float"}};
}

void expect_same_everywhere(const std::vector<std::string>& results) {
  for (size_t r = 1; r < results.size(); ++r) EXPECT_EQ(results[r], results[0]) << "rank " << r;
}

TEST(ReplicaCheck, AgreeingRanksPass) {
  for (int n : {1, 2, 3}) {
    const auto results = check_on_threads(std::vector(n, model_fields("1f2e")));
    for (const auto& r : results) EXPECT_EQ(r, "") << "n=" << n;
  }
}

TEST(ReplicaCheck, ADifferentValueNamesTheRankTheFieldAndBothValues) {
  auto fields = std::vector(3, model_fields("1f2e"));
  fields[2][0].value = "9abc";
  const auto results = check_on_threads(fields);
  expect_same_everywhere(results);
  EXPECT_EQ(results[0],
            "replicas differ (every rank must train the same model on the same data): "
            "rank 2 has data.digest = \"9abc\" where rank 0 has \"1f2e\"");
}

TEST(ReplicaCheck, MissingAndExtraFieldsAreNamed) {
  auto fields = std::vector(2, model_fields("1f2e"));
  fields[1].erase(fields[1].begin() + 1);                        // no model.hidden
  fields[1].push_back({"param extra.weight", "[4, 32] Float"});  // and one more parameter
  fields[1][3].value = "[48, 128] Float";                        // head differs
  const auto results = check_on_threads(fields);
  expect_same_everywhere(results);
  EXPECT_NE(results[0].find("rank 1 has no model.hidden where rank 0 has \"128\""), std::string::npos)
      << results[0];
  EXPECT_NE(results[0].find("rank 1 has param head.weight = \"[48, 128] Float\" where rank 0 has "
                            "\"[47, 128] Float\""),
            std::string::npos)
      << results[0];
  EXPECT_NE(results[0].find("rank 1 has param extra.weight = \"[4, 32] Float\" where rank 0 has none"),
            std::string::npos)
      << results[0];
}

TEST(ReplicaCheck, LongValuesDifferingPastWhatTheSlotShowsStillDiffer) {
  const std::string common(300, 'x');
  std::vector<std::vector<ReplicaField>> fields = {{{"data.path", common + "a"}},
                                                   {{"data.path", common + "b"}}};
  const auto results = check_on_threads(fields);
  expect_same_everywhere(results);
  EXPECT_NE(results[0].find("rank 1 has data.path = \"xxxx"), std::string::npos) << results[0];
  EXPECT_LT(results[0].size(), 2 * kReplicaFieldTextBytes + 200) << "values are cut for the message";
}

TEST(ReplicaCheck, ManyDifferencesAreCountedNotAllListed) {
  std::vector<ReplicaField> a, b;
  for (int i = 0; i < 10; ++i) {
    a.push_back({"param p" + std::to_string(i), "[1] Float"});
    b.push_back({"param p" + std::to_string(i), "[2] Float"});
  }
  const auto results = check_on_threads({a, b, a});
  expect_same_everywhere(results);
  EXPECT_NE(results[0].find("; and 6 more"), std::string::npos) << results[0];
  EXPECT_EQ(results[0].find("rank 2"), std::string::npos) << "rank 2 agrees with rank 0";
}

TEST(ReplicaCheck, RowsRoundTripNamesValuesAndDigests) {
  const auto fields = model_fields("0123456789abcdef");
  const auto row = encode_replica_row(fields, 7);
  const ReplicaRow back = decode_replica_row(row.data(), 7);
  ASSERT_EQ(back.fields.size(), fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    EXPECT_EQ(back.fields[i].name, fields[i].name);
    EXPECT_EQ(back.fields[i].value, fields[i].value);
  }
  EXPECT_NE(back.digests[0], back.digests[1]);
}

}  // namespace
}  // namespace dgcn
