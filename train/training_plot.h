// Loss and metric curves of a training run, drawn with gnuplot (Debian's
// gnuplot-nox; scripts/install-deps.sh installs it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dgcn {

struct CurvePoint {
  int64_t epoch = 0;
  double loss = 0;
  double train = 0, valid = 0, test = 0;  // the task's metric (accuracy or micro-F1)
  bool evaluated = false;                 // valid/test were computed this epoch
};

// Writes `png` (atomically, base/atomic_file.h): the training loss
// on the left axis, train/valid/test `metric` on the right. Throws
// dgcn::Error when there is nothing to draw or gnuplot is missing or fails.
void plot_training_curves(const std::vector<CurvePoint>& points, const std::string& metric,
                          const std::string& png);

}  // namespace dgcn
