#include "report/comparison.hpp"

#include "report/change_table.hpp"
#include "report/significance.hpp"
#include "report/text.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace bisectd::report {

namespace {

constexpr std::string_view k_profile = "perf-profile.";

bool has_profile(const RunMetrics& run) {
  auto first = run.lower_bound(std::string(k_profile));
  return first != run.end() && first->first.starts_with(k_profile);
}

std::vector<double> values_of(const std::string& name, const std::vector<RunMetrics>& runs) {
  bool profile = name.starts_with(k_profile);
  std::vector<double> out;
  for (const auto& run : runs) {
    if (auto it = run.find(name); it != run.end()) {
      out.push_back(it->second);
    } else if (profile && has_profile(run)) {
      out.push_back(0);
    }
  }
  return out;
}

bool both_sides(const MetricComparison& metric) {
  return !metric.parent_samples.empty() && !metric.culprit_samples.empty();
}

// The sort key of a significant row: group, family within `other`, larger change first, name.
auto order_key(const MetricComparison& metric, std::string_view primary) {
  RowGroup group = row_group(metric.name, primary);
  std::string_view family = group == RowGroup::other ? metric_family(metric.name) : std::string_view();
  return std::make_tuple(static_cast<int>(group), family, -std::fabs(table_change(metric)),
                         std::string_view(metric.name));
}

// How many rows of each group a table of `cap` rows shows: one row per group in turn, so that a group with many
// rows (a hundred proc-vmstat counters) cannot push the others (perf-profile's call chains) out of the mail.
std::map<RowGroup, std::size_t> share_out(const std::map<RowGroup, std::vector<const MetricComparison*>>& groups,
                                          std::size_t cap) {
  std::map<RowGroup, std::size_t> quota;
  bool grew = true;
  while (cap > 0 && grew) {
    grew = false;
    for (const auto& [group, rows] : groups) {
      if (cap > 0 && quota[group] < rows.size()) {
        ++quota[group];
        --cap;
        grew = true;
      }
    }
  }
  return quota;
}

} // namespace

std::vector<MetricComparison> compare_runs(const std::vector<RunMetrics>& parent,
                                           const std::vector<RunMetrics>& culprit) {
  std::set<std::string> names;
  for (const auto* side : {&parent, &culprit}) {
    for (const auto& run : *side) {
      for (const auto& [name, value] : run) {
        names.insert(name);
      }
    }
  }
  std::vector<MetricComparison> out;
  out.reserve(names.size());
  for (const auto& name : names) {
    out.push_back({name, values_of(name, parent), values_of(name, culprit)});
  }
  return out;
}

TableRows select_rows(const std::vector<MetricComparison>& metrics, std::string_view primary,
                      const std::vector<std::string>& watch, std::size_t cap) {
  TableRows out;
  auto find = [&](std::string_view name) {
    return std::find_if(metrics.begin(), metrics.end(), [&](const auto& m) { return m.name == name; });
  };
  if (auto p = find(primary); p != metrics.end()) {
    out.rows.push_back(*p);
  }
  std::set<std::string_view> shown{primary};
  for (const auto& name : watch) {
    auto w = find(name);
    if (w != metrics.end() && both_sides(*w) && shown.insert(w->name).second) {
      out.rows.push_back(*w);
    }
  }
  std::vector<const MetricComparison*> significant;
  for (const auto& metric : metrics) {
    if (!shown.contains(metric.name) && significant_change(metric, primary)) {
      significant.push_back(&metric);
    }
  }
  std::sort(significant.begin(), significant.end(),
            [&](const auto* a, const auto* b) { return order_key(*a, primary) < order_key(*b, primary); });
  std::map<RowGroup, std::vector<const MetricComparison*>> groups; // each in table order
  for (const auto* metric : significant) {
    groups[row_group(metric->name, primary)].push_back(metric);
  }
  auto quota = share_out(groups, cap == 0 ? significant.size() : cap);
  for (const auto& [group, rows] : groups) {
    for (std::size_t i = 0; i < quota[group]; ++i) {
      out.rows.push_back(*rows[i]);
    }
    out.hidden += rows.size() - quota[group];
  }
  return out;
}

std::vector<std::string> unavailable_monitors(const std::vector<std::string>& monitors,
                                              const std::vector<MetricComparison>& metrics) {
  std::vector<std::string> out;
  for (const auto& monitor : monitors) {
    bool collected = std::any_of(metrics.begin(), metrics.end(), [&](const auto& m) {
      return metric_family(m.name) == monitor && (!m.parent_samples.empty() || !m.culprit_samples.empty());
    });
    if (!collected) {
      out.push_back(monitor);
    }
  }
  return out;
}

std::string table_notes(std::size_t hidden, std::string_view more_command,
                        const std::vector<std::string>& unavailable) {
  std::string out;
  if (hidden > 0) {
    out += strprintf("    ... %zu more row%s: %s\n", hidden, hidden == 1 ? "" : "s", single_line(more_command).c_str());
  }
  if (!unavailable.empty()) {
    std::string names;
    for (const auto& name : unavailable) {
      names += (names.empty() ? "" : ", ") + metric_label(name);
    }
    out += "unavailable monitors: " + names + " (no metric on any run of either commit)\n";
  }
  return out;
}

std::string render_comparison(std::string_view job, const Commit& a, const Commit& b, const TableRows& table,
                              std::string_view more_command, const std::vector<std::string>& unavailable) {
  auto commit_line = [](const Commit& c) {
    std::string subject = single_line(c.subject);
    return "  " + single_line(c.sha).substr(0, 10) + (subject.empty() ? "" : " (\"" + subject + "\")") + "\n";
  };
  std::string out = "job: " + metric_label(job) + "\ncommit:\n" + commit_line(a) + commit_line(b) + "\n";
  if (table.rows.empty()) {
    return out + "(no row: no metric of both commits changed beyond its noise)\n" +
           table_notes(table.hidden, more_command, unavailable);
  }
  return out + format_change_table(a.sha, b.sha, table.rows) + table_notes(table.hidden, more_command, unavailable);
}

} // namespace bisectd::report
