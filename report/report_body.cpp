#include "report/report_body.hpp"

#include "base/strings.hpp"
#include "report/change_table.hpp"
#include "report/chart.hpp"
#include "report/text.hpp"

#include <map>

namespace bisectd::report::detail {

namespace {

constexpr int k_chart_width = 76;
constexpr int k_chart_height = 16;

// `sha10 ("subject")`, LKP's way of naming a commit in the comparison block.
std::string short_commit(const Commit& commit) {
  return base::short_sha(single_line(commit.sha)) + " (\"" + single_line(commit.subject) + "\")";
}

std::string long_commit(const Commit& commit) {
  return single_line(commit.sha) + " (\"" + single_line(commit.subject) + "\")";
}

std::string indented(std::string_view text, std::string_view indent) {
  std::string out;
  for (const auto& line : base::split_lines(multi_line(text))) {
    out += std::string(indent) + line + "\n";
  }
  return out;
}

std::string commit_list(const std::vector<Commit>& commits) {
  std::string out;
  for (const auto& commit : commits) {
    out += "  " + short_commit(commit) + "\n";
  }
  return out;
}

// The URL without "user:token@": a tree URL with credentials must not go out by mail.
std::string public_url(std::string_view url) {
  std::string text = single_line(url);
  auto scheme = text.find("://");
  if (scheme == std::string::npos) {
    return text;
  }
  auto host_end = text.find('/', scheme + 3);
  auto at = text.rfind('@', host_end == std::string::npos ? std::string::npos : host_end);
  if (at == std::string::npos || at < scheme) {
    return text;
  }
  return text.substr(0, scheme + 3) + text.substr(at + 1);
}

std::string layout_warning() {
  return "****************************************************************************\n"
         "WARNING: this is likely a code-layout artefact, not an effect of the code.\n"
         "Rebuilt with code alignment forced (CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B,\n"
         "-falign-functions=64 or the job's equivalent switch), the culprit and its\n"
         "parent perform alike. The commit probably only moves code or data around;\n"
         "see \"verification\" below before spending time on it.\n"
         "****************************************************************************\n\n";
}

std::string opening(const ReportInput& input) {
  std::string change = primary_change_text(input);
  std::string what = (change.empty() ? "a " : "a " + change + " ") + change_kind(input) + " of " +
                     single_line(input.metric);
  if (!input.confident) {
    return "bisectd noticed " + what + " between\n" + long_commit(input.parent) + " and\n" +
           long_commit(input.culprit) + ",\nbut could not pin it on one commit with high confidence" +
           strprintf(" (best P(culprit) = %.1f%%).\n", 100 * input.p_culprit) +
           strprintf("It is most likely due to one of these %zu commits:\n\n", input.credible_set.size()) +
           commit_list(input.credible_set) + "\nmost probable commit: " + long_commit(input.culprit) + "\n";
  }
  if (!input.credible_set.empty()) {
    return "bisectd noticed " + what + strprintf(" due to one of these %zu commits\n", input.credible_set.size()) +
           "(the bisection could not tell them apart, e.g. some of them do not build):\n\n" +
           commit_list(input.credible_set) + "\nfirst commit measured bad: " + long_commit(input.culprit) + "\n";
  }
  return "bisectd noticed " + what + " due to commit:\n\ncommit: " + long_commit(input.culprit) + "\n";
}

std::string test_block(const ReportInput& input) {
  std::string out;
  auto field = [&](std::string_view key, std::string_view value) {
    if (!value.empty()) {
      out += std::string(key) + ": " + single_line(value) + "\n";
    }
  };
  field("url", public_url(input.url));
  field("branch", input.branch);
  field("testcase", input.testcase);
  field("test machine", input.machine_description);
  if (!input.params.empty()) {
    out += "parameters:\n\n";
    for (const auto& [key, value] : input.params) {
      out += "\t" + single_line(key) + ": " + single_line(value) + "\n";
    }
  }
  return out;
}

std::string tag_block(const ReportInput& input, const std::string& message_id) {
  if (!input.confident || change_kind(input) != "regression" || input.reported_by.empty()) {
    return "";
  }
  std::string id = message_id.size() > 2 ? message_id.substr(1, message_id.size() - 2) : message_id;
  return "If you fix the issue in a separate patch/commit (i.e. not just a new version of\n"
         "the same patch/commit), kindly add following tags\n"
         "| Reported-by: " + single_line(input.reported_by) + "\n"
         "| Closes: https://lore.kernel.org/r/" + id + "\n\n";
}

std::string axis_block(const ReportInput& input) {
  std::map<std::string, std::string> axes;
  auto add = [&](std::string_view key, std::string_view value) {
    if (!single_line(value).empty()) {
      axes[single_line(key)] = single_line(value);
    }
  };
  add("compiler", input.compiler);
  add("kconfig", input.kconfig);
  for (const auto& [key, value] : input.params) {
    add(key, value);
  }
  add("testcase", input.testcase);
  std::vector<std::string> keys, values;
  for (const auto& [key, value] : axes) {
    keys.push_back(key);
    values.push_back(value);
  }
  std::string out(89, '=');
  out += "\n";
  if (!axes.empty()) {
    out += base::join(keys, "/") + ":\n  " + base::join(values, "/") + "\n\n";
  }
  return out;
}

std::string comparison_block(const ReportInput& input) {
  std::string out = axis_block(input);
  out += "commit:\n  " + short_commit(input.parent) + "\n  " + short_commit(input.culprit) + "\n\n";
  const MetricComparison* primary = primary_metric(input);
  if (primary == nullptr) {
    return out + "(no samples stored for the comparison)\n\n";
  }
  std::vector<MetricComparison> shown{*primary};
  for (const auto& metric : input.metrics) {
    if (&metric != primary && changed_beyond_noise(metric)) {
      shown.push_back(metric);
    }
  }
  return out + format_change_table(input.parent.sha, input.culprit.sha, shown) + "\n";
}

std::string confidence_block(const ReportInput& input) {
  std::string out = "confidence:\n";
  if (!input.confident) {
    out += strprintf("  P(most probable commit): %.1f%% (below the job's confidence threshold)\n",
                     100 * input.p_culprit);
  } else if (!input.credible_set.empty()) {
    out += strprintf("  P(culprit is one of the %zu commits): %.1f%%\n", input.credible_set.size(),
                     100 * input.p_culprit);
  } else {
    out += strprintf("  P(culprit): %.1f%%\n", 100 * input.p_culprit);
  }
  out += strprintf("  spent: %d runs, %d builds, %d boots\n", input.runs, input.builds, input.boots);
  out += input.verification.empty() ? "  verification: none\n" : "  verification:\n";
  for (const auto& line : input.verification) {
    out += "    " + single_line(line) + "\n";
  }
  if (!input.credible_set.empty()) {
    out += strprintf("  answer: a set of %zu commits (listed above), not a single commit\n", input.credible_set.size());
  }
  return out + "\n";
}

std::string reproduce_block(const ReportInput& input) {
  std::string out = "To reproduce:\n\n";
  for (const auto& command : input.reproduce) {
    out += "        " + single_line(command) + "\n";
  }
  if (!input.job_yaml.empty()) {
    std::string name = single_line(input.job_name);
    out += "\nThe job file" + (name.empty() ? std::string() : " (" + name + ")") + ":\n\n";
    out += indented(input.job_yaml, "        ");
  }
  return out + "\n";
}

} // namespace

const MetricComparison* primary_metric(const ReportInput& input) {
  for (const auto& metric : input.metrics) {
    if (metric.name == input.metric) {
      return &metric;
    }
  }
  return input.metrics.empty() ? nullptr : &input.metrics.front();
}

std::string primary_change_text(const ReportInput& input) {
  const MetricComparison* primary = primary_metric(input);
  if (primary == nullptr || primary->parent_samples.empty() || primary->culprit_samples.empty()) {
    return "";
  }
  return strprintf("%+.1f%%", relative_change_percent(*primary));
}

std::string change_kind(const ReportInput& input) {
  const MetricComparison* primary = primary_metric(input);
  if (primary == nullptr || primary->parent_samples.empty() || primary->culprit_samples.empty()) {
    return "change";
  }
  double signed_change = relative_change_percent(*primary) * input.direction;
  return signed_change < 0 ? "regression" : "improvement";
}

std::string report_body(const ReportInput& input, const std::string& message_id) {
  std::string out = "Hello,\n\n";
  if (input.layout_artefact) {
    out += layout_warning();
  }
  out += opening(input) + test_block(input) + "\n";
  out += tag_block(input, message_id);
  out += "Details are as below:\n";
  out += std::string(98, '-') + ">\n\n";
  out += comparison_block(input);
  out += confidence_block(input);
  std::string chart = ascii_chart(input.chart, input.metric, k_chart_width, k_chart_height);
  if (!chart.empty()) {
    out += chart + "\n";
  }
  out += reproduce_block(input);
  if (!input.recipients_note.empty()) {
    out += single_line(input.recipients_note) + "\n\n";
  }
  out += "-- \nbisectd performance bisection robot\n";
  return strip_trailing_space(out);
}

} // namespace bisectd::report::detail
