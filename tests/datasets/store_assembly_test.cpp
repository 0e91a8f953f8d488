#include "datasets/store_assembly.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace dgcn {
namespace {

std::string error_of(std::vector<int32_t> labels, int64_t num_classes) {
  GraphStore store;
  try {
    set_single_labels(store, std::move(labels), num_classes, "t.npz");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(StoreAssembly, LabelRuleTakesClassIdsAndMinusOneOnly) {
  EXPECT_EQ(label_problem(0, 0), "");
  EXPECT_EQ(label_problem(-1, 0), "");  // unlabelled
  EXPECT_EQ(label_problem(6, 7), "");
  EXPECT_NE(label_problem(-2, 0).find("not a class id"), std::string::npos);
  EXPECT_NE(label_problem(-100, 0).find("not a class id"), std::string::npos);
  EXPECT_NE(label_problem(int64_t{1} << 31, 0).find("not a class id"), std::string::npos);
  EXPECT_EQ(label_problem(7, 7), "not below num_classes 7");
  EXPECT_EQ(label_problem(1000, 0), "");  // no bound without num_classes
}

TEST(StoreAssembly, SetSingleLabelsCountsClassesFromTheLargestUnlessGiven) {
  GraphStore store;
  set_single_labels(store, {2, -1, 0, 4}, 0, "t.npz");
  EXPECT_EQ(store.task, Task::kSingleLabel);
  EXPECT_EQ(store.num_classes, 5);
  const auto labels = store.labels.as<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(labels.begin(), labels.end()), (std::vector<int32_t>{2, -1, 0, 4}));
  GraphStore given;
  set_single_labels(given, {2, -1}, 9, "t.npz");
  EXPECT_EQ(given.num_classes, 9);
}

TEST(StoreAssembly, SetSingleLabelsRefusesBrokenRulesAndNoLabelledNode) {
  EXPECT_NE(error_of({0, -3, 1}, 0).find("t.npz: node 1's label -3 is not a class id"), std::string::npos)
      << error_of({0, -3, 1}, 0);
  EXPECT_NE(error_of({0, 3}, 3).find("t.npz: node 1's label 3 is not below num_classes 3"),
            std::string::npos);
  EXPECT_NE(error_of({-1, -1}, 0).find("t.npz: no node has a label"), std::string::npos);
  EXPECT_NE(error_of({}, 4).find("no node has a label"), std::string::npos);
}

}  // namespace
}  // namespace dgcn
