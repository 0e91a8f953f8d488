#include "train/training_plot.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"

namespace dgcn {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// gnuplot's path on the PATH, or "".
std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Single quotes for a gnuplot string: ' doubles.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Runs gnuplot on `script` with stdout discarded (a terminal that cannot
// open its output would print the image there) and stderr captured; returns
// the exit status and what gnuplot said.
std::pair<int, std::string> run_gnuplot(const std::string& gnuplot, const std::string& script) {
  int in[2], err[2];
  DGCN_CHECK(::pipe2(in, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0, "plot: pipe: {}",
             std::strerror(errno));
  const pid_t pid = ::fork();
  DGCN_CHECK(pid >= 0, "plot: fork: {}", std::strerror(errno));
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(err[1], 2);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 1);
    ::execl(gnuplot.c_str(), "gnuplot", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(in[0]);
  ::close(err[1]);
  // Feed the script and drain stderr together, so neither side blocks the other.
  const auto old_sigpipe = ::signal(SIGPIPE, SIG_IGN);  // gnuplot may quit before reading it all
  std::string said;
  size_t sent = 0;
  int to = in[1];
  char buf[4096];
  for (;;) {
    pollfd fds[2] = {{err[0], POLLIN, 0}, {to, POLLOUT, 0}};
    const int n = ::poll(fds, to >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (to >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(to, script.data() + sent, script.size() - sent);
      if (w > 0) sent += static_cast<size_t>(w);
      if (w < 0 || sent == script.size()) {
        ::close(to);
        to = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t r = ::read(err[0], buf, sizeof(buf));
      if (r <= 0) break;
      said.append(buf, static_cast<size_t>(r));
    }
  }
  if (to >= 0) ::close(to);
  ::close(err[0]);
  ::signal(SIGPIPE, old_sigpipe);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), said};
}

}  // namespace

void check_plot_output(const std::string& path) {
  DGCN_CHECK(ends_with(path, ".png") || ends_with(path, ".svg"),
             "plot {}: the file name must end in .png or .svg (the format follows it)", path);
  DGCN_CHECK(!find_gnuplot().empty(),
             "plot {}: gnuplot is not on the PATH (Debian: apt-get install gnuplot-nox)", path);
}

std::string plot_script(const std::vector<CurvePoint>& points, const std::string& metric,
                        const std::string& title, const std::string& output, bool svg) {
  const bool evaluated =
      std::any_of(points.begin(), points.end(), [](const CurvePoint& p) { return p.evaluated; });
  std::ostringstream s;
  s << (svg ? "set terminal svg size 900,540 font 'sans,10' background rgb 'white'\n"
            : "set terminal pngcairo size 900,540 font 'sans,10'\n");
  s << "set output " << quoted(output) << "\n";
  s << "set title " << quoted(title) << " noenhanced\n";
  // The data inline, as a datablock: no temporary data file. NaN marks
  // epochs without evaluation (no valid/test point).
  s << "$curves << EOD\n";
  for (const CurvePoint& p : points) {
    s << p.epoch << ' ' << p.loss << ' ' << p.train << ' ';
    if (p.evaluated) {
      s << p.valid << ' ' << p.test << '\n';
    } else {
      s << "NaN NaN\n";
    }
  }
  s << "EOD\n";
  const int64_t first = points.front().epoch, last = points.back().epoch;
  const int64_t span = std::max<int64_t>(1, last - first);
  const int64_t step = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(span) / 10)));
  s << "set xlabel 'epoch'\n"
    << "set xrange [" << first << ":" << std::max(last, first + 1) << "]\n"
    << "set xtics " << step << "\n"
    << "set format x '%.0f'\n"
    << "set ylabel 'training loss'\n"
    << "set y2label " << quoted(metric) << "\n"
    << "set ytics nomirror\n"
    << "set y2tics\n"
    << "set y2range [0:1]\n"
    << "set key outside right top vertical\n"
    << "set grid\n";
  s << "plot $curves using 1:2 with lines lw 2 title 'loss' axes x1y1, \\\n"
    << "     $curves using 1:3 with lines title " << quoted("train " + metric) << " axes x1y2";
  if (evaluated) {
    s << ", \\\n     $curves using 1:4 with linespoints pt 7 ps 0.5 title " << quoted("valid " + metric)
      << " axes x1y2, \\\n     $curves using 1:5 with linespoints pt 7 ps 0.5 title "
      << quoted("test " + metric) << " axes x1y2";
  }
  s << "\n";
  return s.str();
}

void plot_training_curves(const std::vector<CurvePoint>& points, const std::string& metric,
                          const std::string& path, const std::string& title) {
  DGCN_CHECK(!points.empty(), "plot {}: no epochs to draw", path);
  check_plot_output(path);
  // gnuplot writes the temporary file by name; commit() makes it the target.
  AtomicFile out(path);
  const auto [status, said] = run_gnuplot(
      find_gnuplot(), plot_script(points, metric, title, out.temp_path(), ends_with(path, ".svg")));
  std::error_code ec;
  const auto written = std::filesystem::file_size(out.temp_path(), ec);
  // gnuplot may warn and still draw; a failure is its status or no output.
  DGCN_CHECK(status == 0 && !ec && written > 0, "plot {}: gnuplot failed (exit status {}): {}", path, status,
             said.empty() ? std::string("it wrote nothing") : said);
  out.commit();
}

}  // namespace dgcn
