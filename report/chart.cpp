#include "report/chart.hpp"

#include "base/strings.hpp"
#include "report/text.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace bisectd::report {

namespace {

// A step of 1, 2 or 5 times a power of ten near `range / intervals`.
constexpr double k_max_chart_value = 1e300;

double nice_step(double range, int intervals) {
  double raw = range / std::max(intervals, 1);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0}) {
    if (factor * power >= raw * (1 - 1e-9)) {
      return factor * power;
    }
  }
  return 10 * power;
}

// The plot: value axis (rows), commit axis (columns) and the character grid.
class Canvas {
public:
  // `height` is the most data rows to use.
  Canvas(const std::vector<const ChartPoint*>& points, int width, int height) : m_height(height) {
    auto by_value = [](const ChartPoint* a, const ChartPoint* b) { return a->value < b->value; };
    auto by_position = [](const ChartPoint* a, const ChartPoint* b) { return a->position < b->position; };
    set_value_axis((*std::min_element(points.begin(), points.end(), by_value))->value,
                   (*std::max_element(points.begin(), points.end(), by_value))->value);
    m_first = (*std::min_element(points.begin(), points.end(), by_position))->position;
    m_last = (*std::max_element(points.begin(), points.end(), by_position))->position;
    m_labels.assign(static_cast<std::size_t>(m_height), "");
    // At most one tick per row: a step lost in rounding can never make this loop run on.
    int ticks = 0;
    for (double tick = m_low; tick <= m_high + m_step * 0.5 && ticks < m_height; tick += m_step, ++ticks) {
      double shown = std::fabs(tick) < m_step * 1e-9 ? 0.0 : tick;
      auto& label = m_labels[static_cast<std::size_t>(row_of(tick))];
      label = strprintf("%g", shown);
      m_label_width = std::max(m_label_width, label.size());
    }
    m_inner = std::max(width - static_cast<int>(m_label_width) - 3, 10); // " |" before, "|" after
    m_grid.assign(static_cast<std::size_t>(m_height), std::string(static_cast<std::size_t>(m_inner), ' '));
    for (std::size_t row = 0; row < m_labels.size(); ++row) {
      if (!m_labels[row].empty()) {
        m_grid[row].front() = '-';
        m_grid[row].back() = '-';
      }
    }
  }

  void plot(const ChartPoint& point) {
    m_grid[static_cast<std::size_t>(row_of(point.value))][static_cast<std::size_t>(column_of(point.position))] =
      point.bad_side ? 'O' : '+';
  }

  // Offset of `position`'s column from the start of a rendered line.
  [[nodiscard]] std::size_t line_column(std::size_t position) const {
    return m_label_width + 2 + static_cast<std::size_t>(column_of(position));
  }

  [[nodiscard]] std::string margin() const { return std::string(m_label_width + 1, ' '); }

  [[nodiscard]] std::string render() const {
    std::string border = margin() + "+" + std::string(static_cast<std::size_t>(m_inner), '-') + "+\n";
    std::string out = border;
    for (std::size_t row = 0; row < m_grid.size(); ++row) {
      out += std::string(m_label_width - m_labels[row].size(), ' ') + m_labels[row] + " |" + m_grid[row] + "|\n";
    }
    return out + border;
  }

private:
  void set_value_axis(double low, double high) {
    if (high - low <= 1e-12 * std::max(1.0, std::fabs(high))) {
      double pad = std::fabs(high) > 0 ? std::fabs(high) * 0.05 : 1.0;
      low -= pad;
      high += pad;
    }
    m_step = nice_step(high - low, std::max(2, m_height / 3));
    m_low = std::floor(low / m_step) * m_step;
    m_high = std::ceil(high / m_step) * m_step;
    // Equal spacing between tick rows: the row count is a multiple of the tick intervals (plus one).
    int intervals = std::max(1, static_cast<int>(std::lround((m_high - m_low) / m_step)));
    m_height = intervals * std::max(1, (m_height - 1) / intervals) + 1;
  }

  [[nodiscard]] int row_of(double value) const {
    double fraction = (m_high - value) / (m_high - m_low);
    return std::clamp(static_cast<int>(std::lround(fraction * (m_height - 1))), 0, m_height - 1);
  }

  [[nodiscard]] int column_of(std::size_t position) const {
    if (m_last == m_first) {
      return m_inner / 2;
    }
    double fraction = static_cast<double>(position - m_first) / static_cast<double>(m_last - m_first);
    return 2 + static_cast<int>(std::lround(fraction * (m_inner - 5)));
  }

  int m_height;
  double m_low = 0, m_high = 1, m_step = 1;
  std::size_t m_first = 0, m_last = 0;
  std::vector<std::string> m_labels;
  std::size_t m_label_width = 0;
  int m_inner = 10;
  std::vector<std::string> m_grid;
};

// The first bad-side sample in commit order, if any.
const ChartPoint* first_bad(const std::vector<const ChartPoint*>& points) {
  const ChartPoint* culprit = nullptr;
  for (const auto* point : points) {
    if (point->bad_side && (culprit == nullptr || point->position < culprit->position)) {
      culprit = point;
    }
  }
  return culprit;
}

} // namespace

std::string ascii_chart(const std::vector<ChartPoint>& points, std::string_view metric, int width, int height) {
  width = std::max(width, 30);
  height = std::max(height, 4);
  std::vector<const ChartPoint*> finite;
  std::set<std::size_t> positions;
  for (const auto& point : points) {
    // Beyond ±1e300 the axis arithmetic (range, padding, rounding to a step) overflows: such a value is left out
    // like a non-finite one, so that a benchmark printing 1e308 cannot hang or break the report.
    if (std::isfinite(point.value) && std::fabs(point.value) <= k_max_chart_value) {
      finite.push_back(&point);
      positions.insert(point.position);
    }
  }
  if (finite.empty()) {
    return "";
  }
  Canvas canvas(finite, width, height);
  for (const auto* point : finite) {
    canvas.plot(*point);
  }
  std::string title = metric_label(metric);
  std::size_t title_pad = static_cast<std::size_t>(std::max(0, (width - static_cast<int>(title.size())) / 2));
  std::string out = std::string(title_pad, ' ') + title + "\n\n" + canvas.render();
  if (const ChartPoint* culprit = first_bad(finite)) {
    std::size_t column = canvas.line_column(culprit->position);
    std::string text = "culprit " + base::short_sha(single_line(culprit->commit));
    std::size_t start = std::min(column, static_cast<std::size_t>(std::max(0, width - static_cast<int>(text.size()))));
    out += std::string(column, ' ') + "^\n" + std::string(start, ' ') + text + "\n";
  }
  out += "\n" + canvas.margin() + strprintf("x: %zu tested commits in commit order\n", positions.size());
  out += canvas.margin() + "[+] bisect-good sample\n";
  out += canvas.margin() + "[O] bisect-bad  sample\n";
  return out;
}

} // namespace bisectd::report
