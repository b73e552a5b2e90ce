#pragma once
// The real-world labelled series of the Turing Change Point Dataset (TCPD) vendored under data/tcpd/, and the
// F1 score of TCPDBench (analysis/scripts/metrics.py f_measure: margin 5, every annotator's set and the
// predictions include point 0, precision against the union of all annotators, recall averaged over them).

#include "bisect/detect.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace bisectd::bench {

struct TcpdSeries {
  std::string name;
  std::vector<bisect::SeriesPoint> points;           // one sample per point; a missing value has none
  std::vector<std::vector<std::size_t>> annotations; // one list of change points per annotator (0-based)
};

// Loads every series named in dir/annotations.json from dir/<name>.csv (one value per line, "nan" = missing).
// Returns false and a one-line `error` (file and what is wrong) when a file is missing or malformed.
bool load_tcpd(const std::string& dir, std::vector<TcpdSeries>& out, std::string& error);

// TCPDBench's F1 of `predictions` (0-based indices) against the annotators' lists.
double tcpd_f1(const std::vector<std::vector<std::size_t>>& annotations, std::vector<std::size_t> predictions);

} // namespace bisectd::bench
