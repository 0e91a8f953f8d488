#include "train/training_plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/error.h"

namespace dgcn {

void plot_training_curves(const std::vector<CurvePoint>& points, const std::string& metric,
                          const std::string& png) {
  DGCN_CHECK(!points.empty(), "plot {}: no epochs to draw", png);
  // gnuplot writes the temporary file by name; commit() makes it the target.
  AtomicFile out(png);
  const std::string& tmp_png = out.temp_path();
  char data_name[] = "/tmp/dgcn-plot-XXXXXX";
  const int fd = mkstemp(data_name);
  DGCN_CHECK(fd >= 0, "plot {}: cannot create a temporary data file", png);
  close(fd);
  {
    std::ofstream data(data_name);
    for (const CurvePoint& p : points) {
      // gnuplot skips "NaN" points: epochs without evaluation show no valid/test mark.
      data << p.epoch << ' ' << p.loss << ' ' << p.train << ' ';
      if (p.evaluated) {
        data << p.valid << ' ' << p.test << '\n';
      } else {
        data << "NaN NaN\n";
      }
    }
  }
  const std::string script = fmt::format(
      "set terminal pngcairo size 900,540 font 'sans,10'\n"
      "set output '{}'\n"
      "set title 'dgcn-train'\n"
      "set xlabel 'epoch'\n"
      "set ylabel 'training loss'\n"
      "set y2label '{}'\n"
      "set ytics nomirror\n"
      "set y2tics\n"
      "set y2range [0:1]\n"
      "set key bottom right\n"
      "set grid\n"
      "plot '{}' using 1:2 with lines lw 2 title 'loss' axes x1y1, \\\n"
      "     '' using 1:3 with lines title 'train {}' axes x1y2, \\\n"
      "     '' using 1:4 with linespoints pt 7 ps 0.5 title 'valid {}' axes x1y2, \\\n"
      "     '' using 1:5 with linespoints pt 7 ps 0.5 title 'test {}' axes x1y2\n",
      tmp_png, metric, data_name, metric, metric, metric);
  FILE* gp = popen("gnuplot 1>&2", "w");
  if (!gp) {
    std::remove(data_name);
    throw Error(fmt::format("plot {}: cannot start gnuplot (install gnuplot-nox)", png));
  }
  std::fputs(script.c_str(), gp);
  const int status = pclose(gp);
  std::remove(data_name);
  std::error_code ec;
  const auto written = std::filesystem::file_size(tmp_png, ec);
  if (status != 0 || ec || written == 0) {
    throw Error(fmt::format("plot {}: gnuplot failed (exit status {}; is gnuplot-nox installed?)", png,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  out.commit();
}

}  // namespace dgcn
