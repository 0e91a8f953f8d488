#include "train/training_plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace dgcn {
namespace {

TEST(TrainingPlot, DrawsAPng) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const std::string png =
      std::filesystem::temp_directory_path() / ("dgcn-plot-test-" + std::to_string(getpid()) + ".png");
  std::vector<CurvePoint> points;
  for (int64_t e = 0; e < 5; ++e)
    points.push_back({e, 2.0 / (e + 1), 0.5 + 0.05 * e, 0.4 + 0.05 * e, 0.45, e % 2 == 1});
  plot_training_curves(points, "acc", png);
  std::ifstream in(png, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  EXPECT_FALSE(std::filesystem::exists(png + ".tmp"));
  std::filesystem::remove(png);
  EXPECT_THROW(plot_training_curves({}, "acc", png), Error);
}

}  // namespace
}  // namespace dgcn
