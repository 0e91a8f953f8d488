#include "train/training_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "ci_skip.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

bool have_gnuplot() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

std::vector<CurvePoint> five_epochs(bool evaluated) {
  std::vector<CurvePoint> points;
  for (int64_t e = 1; e <= 5; ++e)
    points.push_back({e, 2.0 / e, 0.5 + 0.05 * e, 0.4 + 0.05 * e, 0.45, evaluated && e % 2 == 0});
  return points;
}

std::string head_of(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  return s;
}

TEST(TrainingPlot, DrawsPngAndSvgAndLeavesNothingElse) {
  if (!have_gnuplot()) DGCN_SKIP_OUTSIDE_CI("gnuplot is not installed");
  testing::ScratchDir dir;
  plot_training_curves(five_epochs(true), "acc", dir.file("run.png"), "dgcn-train: x.gcn");
  EXPECT_EQ(head_of(dir.file("run.png"), 4).substr(1), "PNG");
  plot_training_curves(five_epochs(true), "acc", dir.file("run.svg"));
  EXPECT_NE(head_of(dir.file("run.svg"), 2000).find("<svg"), std::string::npos);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"run.png", "run.svg"}));
  EXPECT_THROW(plot_training_curves({}, "acc", dir.file("empty.png")), Error);
}

TEST(TrainingPlot, ScriptDrawsOnlyTheCurvesThatExistWithIntegerEpochs) {
  const std::string with_eval = plot_script(five_epochs(true), "f1", "t", "o.tmp", /*svg=*/true);
  EXPECT_NE(with_eval.find("set terminal svg"), std::string::npos);
  EXPECT_NE(with_eval.find("'valid f1'"), std::string::npos);
  EXPECT_NE(with_eval.find("set xtics 1"), std::string::npos);
  EXPECT_NE(with_eval.find("set key outside"), std::string::npos);
  const std::string without = plot_script(five_epochs(false), "f1", "it's", "o.tmp", /*svg=*/false);
  EXPECT_EQ(without.find("valid f1"), std::string::npos) << "no evaluation: no valid/test curves";
  EXPECT_NE(without.find("pngcairo"), std::string::npos);
  EXPECT_NE(without.find("'it''s'"), std::string::npos) << "quotes escaped";
}

TEST(TrainingPlot, BadOutputsAreErrorsBeforeAnythingIsDrawn) {
  try {
    check_plot_output("curves.pdf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must end in .png or .svg"), std::string::npos) << e.what();
  }
  if (!have_gnuplot())
    DGCN_SKIP_OUTSIDE_CI("gnuplot is not installed: the folder check (drawing) was not run");
  // A folder that does not exist: AtomicFile's own clear error, no file anywhere.
  testing::ScratchDir dir;
  EXPECT_THROW(plot_training_curves(five_epochs(true), "acc", dir.file("none/run.png")), Error);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(TrainingPlot, GnuplotsOwnWordsWhenItFails) {
  if (!have_gnuplot()) DGCN_SKIP_OUTSIDE_CI("gnuplot is not installed");
  // A gnuplot that fails as the real one does: its message must come back.
  testing::ScratchDir dir;
  const std::string fake = dir.file("gnuplot");
  std::ofstream(fake) << "#!/bin/sh\ncat >/dev/null\necho 'line 3: unknown terminal type' >&2\nexit 1\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const std::string path = std::getenv("PATH");
  setenv("PATH", (dir.path() + ":" + path).c_str(), 1);
  try {
    plot_training_curves(five_epochs(true), "acc", dir.file("run.png"));
    FAIL() << "the failing gnuplot was not noticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3: unknown terminal type"), std::string::npos) << e.what();
  }
  setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"gnuplot"}) << "no temporary left";
}

}  // namespace
}  // namespace dgcn
