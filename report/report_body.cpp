#include "report/report_body.hpp"

#include "base/strings.hpp"
#include "base/units.hpp"
#include "report/change_table.hpp"
#include "report/chart.hpp"
#include "report/comparison.hpp"
#include "report/mime.hpp"
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
  std::string what =
    (change.empty() ? "a " : "a " + change + " ") + change_kind(input) + " of " + metric_label(input.metric);
  if (!input.confident) {
    return "bisectd noticed " + what + " between\n" + long_commit(input.parent) + " and\n" +
           long_commit(input.culprit) + ",\nbut could not pin it on one commit with high confidence" +
           " (best P(culprit) = " + base::probability_percent(input.p_culprit) + ").\n" +
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

// A repeat of an earlier report: the reader learns that this copy was not mailed and which mail it answers.
std::string repeat_note(const ReportInput& input) {
  if (!input.earlier) {
    return "";
  }
  const auto& e = *input.earlier;
  return "This culprit was reported before for the same tree and job (bisection " + std::to_string(e.bisection_id) +
         ", " + rfc5322_date(e.created_at) + ",\nMessage-ID " + single_line(e.message_id) +
         "). This bisection found it again; this report answers\n"
         "that mail and was not mailed itself.\n\n";
}

std::string test_block(const ReportInput& input) {
  std::string out;
  auto field = [&](std::string_view key, std::string_view value) {
    if (!value.empty()) {
      out += std::string(key) + ": " + single_line(value) + "\n";
    }
  };
  field("url", base::strip_url_userinfo(input.url));
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

// Reported-by and Closes only as configured: a Closes link must lead to an archive that received the mail (for a
// repeat, the first mail: that is the one a fix closes).
std::string tag_block(const ReportInput& input, const std::string& message_id) {
  std::string reported_by = single_line(input.reported_by);
  std::string archive = single_line(input.archive_url);
  if (!input.confident || change_kind(input) != "regression" || (reported_by.empty() && archive.empty())) {
    return "";
  }
  std::string mailed = input.earlier ? single_line(input.earlier->message_id) : message_id;
  std::string id = mailed.size() > 2 && mailed.front() == '<' ? mailed.substr(1, mailed.size() - 2) : mailed;
  std::string out = "If you fix the issue in a separate patch/commit (i.e. not just a new version of\n"
                    "the same patch/commit), kindly add following tags\n";
  if (!reported_by.empty()) {
    out += "| Reported-by: " + reported_by + "\n";
  }
  if (!archive.empty()) {
    out += "| Closes: " + archive + (archive.ends_with('/') ? "" : "/") + id + "\n";
  }
  return out + "\n";
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

// The parent line of the comparison, naming the commit whose build was measured when it is not the parent's own.
std::string parent_line(const ReportInput& input) {
  std::string line = "  " + short_commit(input.parent);
  if (input.same_binary_as) {
    line += "  (same binary as " + base::short_sha(single_line(input.same_binary_as->sha)) + " \"" +
            single_line(input.same_binary_as->subject) + "\")";
  }
  return line + "\n";
}

std::string comparison_block(const ReportInput& input) {
  std::string out = axis_block(input);
  out += "commit:\n" + parent_line(input) + "  " + short_commit(input.culprit) + "\n\n";
  const MetricComparison* primary = primary_metric(input);
  if (primary == nullptr) {
    return out + "(no samples stored for the comparison)\n\n";
  }
  TableRows table = select_rows(input.metrics, primary->name, input.watch, input.row_cap);
  std::string more = strprintf("bisectctl report %lld --all", static_cast<long long>(input.bisection_id));
  return out + format_change_table(input.parent.sha, input.culprit.sha, table.rows) +
         table_notes(table.hidden, more, unavailable_monitors(input.monitors, input.metrics)) + "\n";
}

// "shift: -6.5% (95% interval -7.1% .. -5.9%), culprit vs parent, 3 + 3 runs": the number the subject gives.
std::string shift_line(const ReportInput& input) {
  const MetricComparison* primary = primary_metric(input);
  if (primary == nullptr) {
    return "";
  }
  ShiftEstimate shift = estimate_shift(*primary);
  if (!shift.known) {
    return "";
  }
  return strprintf("  shift: %+.1f%% (95%% interval %+.1f%% .. %+.1f%%) of %s, culprit vs parent, %zu + %zu runs\n",
                   relative_change_percent(*primary), 100 * shift.low, 100 * shift.high,
                   metric_label(primary->name).c_str(), shift.culprit_runs, shift.parent_runs);
}

std::string machine_time(double seconds) {
  return base::format_duration(std::chrono::milliseconds(static_cast<long long>(seconds * 1000)));
}

std::string confidence_block(const ReportInput& input) {
  std::string out = "confidence:\n";
  std::string p = base::probability_percent(input.p_culprit);
  if (!input.confident) {
    out += "  P(most probable commit): " + p + " (below the job's confidence threshold)\n";
  } else if (!input.credible_set.empty()) {
    out += strprintf("  P(culprit is one of the %zu commits): ", input.credible_set.size()) + p + "\n";
  } else {
    out += "  P(culprit): " + p + "\n";
  }
  out += shift_line(input);
  out += strprintf("  spent: %d runs, %d builds", input.runs, input.builds) +
         (input.boots ? strprintf(", %d boots", *input.boots) : std::string()) +
         (input.machine_seconds > 0 ? ", " + machine_time(input.machine_seconds) + " of machine time\n"
                                    : std::string("\n"));
  if (input.runs_reused > 0) {
    out += strprintf("  reused: %d runs measured before the bisection (the alert's and the watch's)\n",
                     input.runs_reused);
  }
  out += input.verification.empty() ? "  verification: none\n" : "  verification:\n";
  for (const auto& line : input.verification) {
    out += "    " + single_line(line) + "\n";
  }
  if (!input.credible_set.empty()) {
    out += strprintf("  answer: a set of %zu commits (listed above), not a single commit\n", input.credible_set.size());
  }
  return out + "\n";
}

// At most `max` lines of `lines`, the rest counted on a line of their own after them.
std::vector<std::string> capped(std::vector<std::string> lines, std::size_t max, std::string_view what) {
  if (lines.size() > max) {
    std::size_t more = lines.size() - max;
    lines.resize(max);
    lines.push_back(strprintf("... %zu more ", more) + std::string(what));
  }
  return lines;
}

// A line from the tree or a tool (already one line), cut to what a mail line holds comfortably.
std::string cut_line(std::string line) {
  constexpr std::size_t k_max_line = 200;
  if (line.size() > k_max_line) {
    std::size_t end = k_max_line;
    while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xc0U) == 0x80U) {
      --end; // not inside a UTF-8 sequence
    }
    line = line.substr(0, end) + "...";
  }
  return line;
}

// The culprit's files (a single culprit only: of a set or an unsure answer it would single one out). The lines keep
// libgit2's padding (the bars line up); a path's control characters become spaces.
std::string diffstat_block(const ReportInput& input) {
  if (input.diffstat.empty() || !input.confident || !input.credible_set.empty()) {
    return "";
  }
  std::vector<std::string> files;
  std::string summary;
  for (const auto& raw : base::split_lines(multi_line(input.diffstat))) {
    std::string line = cut_line(std::string(base::trim(raw)));
    if (line.find(" changed") != std::string::npos && line.find(" | ") == std::string::npos) {
      summary = line;
    } else if (!line.empty()) {
      files.push_back(line);
    }
  }
  std::string out = "diffstat of " + short_commit(input.culprit) + ":\n\n";
  for (const auto& line : capped(files, k_max_diffstat_files, "files")) {
    out += " " + line + "\n";
  }
  return out + (summary.empty() ? "" : " " + summary + "\n") + "\n";
}

// The commits the search went around, with why: a reader can tell a culprit next to an unbuildable stretch.
std::string skipped_block(const ReportInput& input) {
  if (input.skipped.empty()) {
    return "";
  }
  std::string out = strprintf("skipped: %zu commit%s could not be measured, the bisection searched around them:\n",
                              input.skipped.size(), input.skipped.size() == 1 ? "" : "s");
  std::vector<std::string> lines;
  for (const auto& skipped : input.skipped) {
    std::string why = cut_line(single_line(skipped.why));
    lines.push_back(short_commit(skipped.commit) + "\n      " + (why.empty() ? "(no reason stored)" : why));
  }
  std::string more = strprintf("(bisectctl show %lld lists them all)", static_cast<long long>(input.bisection_id));
  for (const auto& line : capped(lines, k_max_skipped_listed, more)) {
    out += "  " + line + "\n";
  }
  return out + "\n";
}

// LKP gives the commands: a reader who has never heard of bisectd can measure the culprit and its parent.
std::string reproduce_block(const ReportInput& input) {
  std::string out;
  if (!input.reproduce_script.empty()) {
    out += "To reproduce without bisectd";
    if (input.job_yaml.empty()) {
      out += ":\n\n";
    } else if (input.files.empty()) {
      out += " (the job file " + job_file_name(input) + " is attached):\n\n";
    } else {
      out += " (the job file " + job_file_name(input) + " and the files the commands read\n"
             "are attached: save them in the directory you start in):\n\n";
    }
    for (const auto& line : input.reproduce_script) {
      out += indented(base::strip_url_userinfo(line), "        "); // multi-line: a quoted argument may hold a LF
    }
    out += "\n";
  }
  if (!input.reproduce.empty()) {
    out += input.reproduce_script.empty() ? "To reproduce:\n\n" : "With bisectd:\n\n";
    for (const auto& command : input.reproduce) {
      out += "        " + base::strip_url_userinfo(single_line(command)) + "\n"; // `tree add URL` names the tree URL
    }
    out += "\n";
  }
  if (!input.job_yaml.empty()) {
    std::string name = single_line(input.job_name);
    out += "The job file" + (name.empty() ? std::string() : " (" + name + ")") + ", attached as " +
           job_file_name(input) + ":\n\n";
    out += indented(base::strip_url_userinfo(input.job_yaml), "        ") + "\n"; // a fetch URL may carry a token
  }
  return out;
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
  return strprintf("%+.1f%%", relative_change_percent(*primary)); // the table's %change and the shift line's
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
  out += repeat_note(input) + opening(input) + test_block(input) + "\n";
  out += tag_block(input, message_id);
  out += "Details are as below:\n";
  out += std::string(98, '-') + ">\n\n";
  out += diffstat_block(input);
  out += comparison_block(input);
  out += confidence_block(input);
  out += skipped_block(input);
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
