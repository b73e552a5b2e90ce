// Prints the cost of one run's monitors: the snapshot pair (all five /proc files, read as the local backend does)
// and the metric computation, as a mean over N repetitions, and as a share of a run of the given length.
//   monitors-cost [--repeat N] [--run-seconds S]

#include "base/fs.hpp"
#include "monitors/monitors.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace bisectd;
using Clock = std::chrono::steady_clock;

namespace {

monitors::Snapshot snapshot(const std::set<std::string>& chosen) {
  monitors::Snapshot s;
  for (const auto& file : monitors::proc_files(chosen)) {
    if (auto text = base::read_file("/proc/" + file)) {
      s.files[file] = std::move(*text);
    }
  }
  return s;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

} // namespace

int main(int argc, char** argv) {
  int repeat = 1000;
  double run_seconds = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--repeat") {
      repeat = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--run-seconds") {
      run_seconds = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "monitors-cost: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const auto& names = monitors::known_monitors();
  std::set<std::string> all(names.begin(), names.end());
  double read = 0, compute = 0;
  std::size_t count = 0;
  for (int i = 0; i < repeat; ++i) {
    auto start = Clock::now();
    auto before = snapshot(all);
    auto after = snapshot(all);
    read += seconds_since(start);
    start = Clock::now();
    count = monitors::system_metrics(all, before, after, run_seconds).size();
    compute += seconds_since(start);
  }
  double per_run = (read + compute) / repeat;
  std::printf("%-28s %12s\n", "monitors (all six)", "per run");
  std::printf("%-28s %9.1f us\n", "read 2 x 5 /proc files", 1e6 * read / repeat);
  std::printf("%-28s %9.1f us\n", "compute metrics", 1e6 * compute / repeat);
  std::printf("%-28s %12zu\n", "metrics per run", count);
  std::printf("%-28s %11.3f%%\n", "of a run's wall time", 100.0 * per_run / run_seconds);
  std::printf("(run length %.2f s; neither step runs while the benchmark does)\n", run_seconds);
  return 0;
}
