// Loss and metric curves of a training run, drawn with gnuplot (Debian's
// gnuplot-nox; scripts/install-deps.sh installs it) as PNG or SVG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dgcn {

struct CurvePoint {
  int64_t epoch = 0;  // its number, from 1
  double loss = 0;
  double train = 0, valid = 0, test = 0;  // the task's metric (accuracy or micro-F1)
  bool evaluated = false;                 // valid/test were computed this epoch
};

// Before training: checks that `path` ends in .png or .svg and that gnuplot
// is on the PATH; throws dgcn::Error saying which is not so.
void check_plot_output(const std::string& path);

// The gnuplot script for `points` (exposed for tests): the training loss on
// the left axis, train/valid/test `metric` on the right (valid/test only
// when some epoch was evaluated), integer epoch ticks, the legend outside
// the curves, `title` on top, written to `output` as SVG or PNG.
std::string plot_script(const std::vector<CurvePoint>& points, const std::string& metric,
                        const std::string& title, const std::string& output, bool svg);

// Writes the plot to `path` atomically (base/atomic_file.h). Throws
// dgcn::Error when there is nothing to draw, or with gnuplot's own words
// when it fails; nothing is left behind then.
void plot_training_curves(const std::vector<CurvePoint>& points, const std::string& metric,
                          const std::string& path, const std::string& title = "dgcn-train");

}  // namespace dgcn
