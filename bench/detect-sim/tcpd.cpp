#include "tcpd.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace bisectd::bench {

namespace {

constexpr long k_margin = 5;

bool read_values(const std::string& path, std::vector<bisect::SeriesPoint>& points, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    bisect::SeriesPoint p;
    p.id = std::to_string(points.size());
    if (line != "nan") {
      char* end = nullptr;
      const double v = std::strtod(line.c_str(), &end);
      if (line.empty() || *end != '\0' || !std::isfinite(v)) {
        error = path + ":" + std::to_string(number) + ": '" + line + "' is not a number or nan";
        return false;
      }
      p.samples.push_back(v);
    }
    points.push_back(std::move(p));
  }
  return true;
}

// metrics.py true_positives: each true point takes the nearest unused prediction within the margin.
std::size_t true_positives(const std::set<std::size_t>& truth, std::set<std::size_t> predictions) {
  std::size_t hits = 0;
  for (std::size_t tau : truth) {
    auto best = predictions.end();
    long best_distance = k_margin + 1;
    for (auto it = predictions.begin(); it != predictions.end(); ++it) {
      const long d = std::labs(static_cast<long>(*it) - static_cast<long>(tau));
      if (d < best_distance) {
        best_distance = d;
        best = it;
      }
    }
    if (best != predictions.end()) {
      predictions.erase(best);
      ++hits;
    }
  }
  return hits;
}

} // namespace

bool load_tcpd(const std::string& dir, std::vector<TcpdSeries>& out, std::string& error) {
  const std::string index = dir + "/annotations.json";
  std::ifstream in(index);
  if (!in) {
    error = index + ": cannot open";
    return false;
  }
  nlohmann::json root = nlohmann::json::parse(in, nullptr, false);
  if (!root.is_object()) {
    error = index + ": not a JSON object";
    return false;
  }
  for (const auto& [name, by_annotator] : root.items()) {
    TcpdSeries s;
    s.name = name;
    for (const auto& [annotator, points] : by_annotator.items()) {
      s.annotations.push_back(points.get<std::vector<std::size_t>>());
    }
    if (!read_values(dir + "/" + name + ".csv", s.points, error)) {
      return false;
    }
    out.push_back(std::move(s));
  }
  return true;
}

double tcpd_f1(const std::vector<std::vector<std::size_t>>& annotations, std::vector<std::size_t> predictions) {
  std::set<std::size_t> x(predictions.begin(), predictions.end()), all;
  x.insert(0);
  double recall = 0;
  for (const auto& list : annotations) {
    std::set<std::size_t> t(list.begin(), list.end());
    t.insert(0);
    all.insert(t.begin(), t.end());
    recall += static_cast<double>(true_positives(t, x)) / static_cast<double>(t.size());
  }
  recall /= static_cast<double>(annotations.size());
  const double precision = static_cast<double>(true_positives(all, x)) / static_cast<double>(x.size());
  return precision + recall == 0 ? 0.0 : 2 * precision * recall / (precision + recall);
}

} // namespace bisectd::bench
