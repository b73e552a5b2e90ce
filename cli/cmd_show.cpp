#include "cli/cmd_show.hpp"

#include "base/strings.hpp"
#include "base/units.hpp"
#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>

namespace bisectd::cli {
namespace {

constexpr std::size_t k_recent_events = 10;

struct ShowOptions {
  std::string id;
  bool json = false;
  bool all = false; // report: every significant row of the table
};

// "label       value": labels padded to one column, a longer label still followed by a space.
void line(std::ostringstream& out, const char* label, const std::string& value) {
  std::string padded(label);
  padded.resize(std::max<std::size_t>(padded.size() + 1, 12), ' ');
  out << padded << value << '\n';
}

std::string culprit_text(const nlohmann::json& b) {
  if (!b.contains("culprit") || !b["culprit"].is_string()) {
    return "-";
  }
  std::string subject = field_text(b, "culprit_subject");
  return b["culprit"].get<std::string>() + (subject == "-" ? "" : " " + subject);
}

std::string shift_text(const nlohmann::json& b) {
  const nlohmann::json shift = b.value("shift", nlohmann::json());
  auto estimate = field_number(shift, "estimate");
  if (!estimate) {
    return "-";
  }
  auto low = field_number(shift, "low");
  auto high = field_number(shift, "high");
  std::string text = base::signed_percent(*estimate);
  if (low && high) {
    text += " (95% interval " + base::signed_percent(*low) + " .. " + base::signed_percent(*high) + ")";
  }
  if (shift.contains("of") && shift["of"].is_string()) {
    text += ", " + shift["of"].get<std::string>(); // the report's number; else the search's running estimate
  }
  return text;
}

// "SHA subject", or "-".
std::string commit_text(const nlohmann::json& commit) {
  if (!commit.is_object() || !commit.contains("commit") || !commit["commit"].is_string()) {
    return "-";
  }
  std::string subject = field_text(commit, "subject");
  return commit["commit"].get<std::string>() + (subject == "-" ? "" : " " + subject);
}

// The culprit's real parent, as the report names it, with the commit whose binary was measured in its place.
std::string parent_text(const nlohmann::json& b) {
  const auto compared = b.value("compared", nlohmann::json());
  if (!compared.is_object()) {
    return "";
  }
  std::string text = commit_text(compared.value("parent", nlohmann::json()));
  const auto same = compared.value("same_binary_as", nlohmann::json());
  if (same.is_object()) {
    text += " (same binary as " + commit_text(same) + ")";
  }
  return text == "-" ? "" : text;
}

// A search that ended without a culprit because nothing changed (a merge's branch that does not regress names the
// merge itself: that is a culprit, state found).
bool no_change(const nlohmann::json& b) {
  return field_text(b, "verdict") == "no_change" && field_text(b, "state") != "found";
}

// "no change beyond the threshold (±2%: the most likely shift is within [-0.8%, +0.6%])".
std::string no_change_text(const nlohmann::json& b) {
  const nlohmann::json shift = b.value("shift", nlohmann::json());
  auto low = field_number(shift, "low");
  auto high = field_number(shift, "high");
  auto threshold = field_number(b, "threshold");
  std::string within;
  if (low && high && (*low != 0 || *high != 0)) { // an older daemon left them 0 for "no change"
    within =
      "the most likely shift is within [" + base::signed_percent(*low) + ", " + base::signed_percent(*high) + "]";
  }
  std::string limit = threshold ? "±" + format_number(*threshold * 100) + "%" : "";
  std::string detail = limit + (!limit.empty() && !within.empty() ? ": " : "") + within;
  return "no change beyond the threshold" + (detail.empty() ? "" : " (" + detail + ")");
}

// The commits the first bad one may be, introduced by why the search ended on a set rather than one commit.
void render_credible_set(std::ostringstream& out, const nlohmann::json& b) {
  const auto& set = b.value("credible_set", nlohmann::json::array());
  if (!set.is_array() || set.empty()) {
    return;
  }
  std::string verdict = field_text(b, "verdict");
  if (verdict == "budget_exhausted") {
    line(out, "verdict", "budget spent before one commit was certain; the first bad commit is one of:");
  } else if (verdict == "ambiguous") {
    line(out, "verdict", "only commits that cannot be built or run separate them; the first bad commit is one of:");
  } else if (set.size() > 1) {
    out << "the first bad commit could be any of:\n";
  } else {
    return;
  }
  for (const auto& sha : set) {
    out << "  " << (sha.is_string() ? sha.get<std::string>() : sha.dump()) << '\n';
  }
}

void render_answer(std::ostringstream& out, const nlohmann::json& b) {
  if (no_change(b)) {
    line(out, "verdict", no_change_text(b));
    line(out, "P(no change)", format_probability(field_number(b, "p_no_change")));
    return;
  }
  line(out, "culprit", culprit_text(b));
  if (auto parent = parent_text(b); !parent.empty()) {
    line(out, "parent", parent);
  }
  if (b.contains("merge") && b["merge"].is_string()) {
    line(out, "via merge", b["merge"].get<std::string>() + " (the search recursed into the merged branch)");
  }
  line(out, "P(culprit)", format_probability(field_number(b, "p_culprit")));
  render_credible_set(out, b);
  line(out, "shift", shift_text(b));
}

void render_header(std::ostringstream& out, const nlohmann::json& b, std::int64_t now) {
  out << "bisection " << field_text(b, "id") << ": " << field_text(b, "state") << '\n';
  if (b.contains("waiting_for") && b["waiting_for"].is_string()) { // a queued request no machine can take
    line(out, "waiting for", b["waiting_for"].get<std::string>());
  }
  line(out, "tree", field_text(b, "tree") + " (branch " + field_text(b, "branch") + ")");
  line(out, "job", field_text(b, "job") + " (metric " + field_text(b, "metric") + ")");
  line(out, "good", field_text(b, "good"));
  line(out, "bad", field_text(b, "bad"));
  render_answer(out, b);
  line(out, "runs", field_text(b, "runs"));
  line(out, "builds", field_text(b, "builds"));
  if (b.contains("boots")) { // older daemons do not count them
    line(out, "boots", field_text(b, "boots"));
  }
  if (auto seconds = field_number(b, "machine_seconds"); seconds && *seconds > 0) { // older daemons: absent
    line(out, "machine time",
         base::format_duration(std::chrono::seconds(std::llround(*seconds))) + " (lab machines held for its visits)");
  }
  if (b.contains("runs_reused")) {
    line(out, "reused runs", field_text(b, "runs_reused") + " (measured before the bisection, not in runs)");
  }
  line(out, "origin", field_text(b, "origin"));
  std::string age = format_age(b, "created_at", now);
  line(out, "created", field_text(b, "created_at") + (age == "-" ? "" : " (" + age + " ago)"));
  line(out, "finished", field_text(b, "finished_at"));
  if (b.contains("error") && b["error"].is_string() && !b["error"].get<std::string>().empty()) {
    line(out, "error", b["error"].get<std::string>());
  }
}

void render_verification(std::ostringstream& out, const nlohmann::json& b) {
  const auto verification = b.value("verification", nlohmann::json());
  if (!verification.is_object() || verification.empty()) {
    return;
  }
  out << "\nverification:\n";
  for (const auto& [check, result] : verification.items()) {
    // The per-step lines are what a reader wants; the raw numbers stay in --json.
    if (check == "numbers" || check == "culprit") {
      continue;
    }
    std::string text = result.is_string() ? result.get<std::string>() : result.dump();
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "  %-16s ", check.c_str());
    out << buffer << text << '\n';
  }
}

void render_events(std::ostringstream& out, const nlohmann::json& b) {
  const auto events = b.value("events", nlohmann::json::array());
  if (!events.is_array() || events.empty()) {
    return;
  }
  std::size_t first = events.size() > k_recent_events ? events.size() - k_recent_events : 0;
  out << "\nrecent events:\n";
  for (std::size_t i = first; i < events.size(); ++i) {
    out << "  " << field_text(events[i], "at") << "  " << field_text(events[i], "message") << '\n';
  }
}

// Every request of the bisection: the ids `bisectctl logs KIND ID` takes.
void render_requests(std::ostringstream& out, const nlohmann::json& b) {
  Table table({"ID", "COMMIT", "PURPOSE", "VARIANT", "STATE", "MACHINE", "ATTEMPTS"},
              {Align::right, Align::left, Align::left, Align::left, Align::left, Align::left, Align::right});
  for (const auto& r : b.value("requests", nlohmann::json::array())) {
    std::string variant = field_text(r, "variant");
    table.add_row({field_text(r, "id"), field_sha(r, "commit"), field_text(r, "purpose"),
                   variant.empty() ? "-" : variant, field_text(r, "state"), field_text(r, "machine"),
                   field_text(r, "attempts")});
  }
  if (table.rows() > 0) {
    out << "\nrequests (`bisectctl logs build|request|console ID`):\n" << table.render();
  }
}

// Requests that failed, each with the command that shows why.
void render_failures(std::ostringstream& out, const nlohmann::json& b) {
  bool first = true;
  for (const auto& r : b.value("requests", nlohmann::json::array())) {
    if (field_text(r, "state") != "failed") {
      continue;
    }
    if (first) {
      out << "\nfailed requests:\n";
      first = false;
    }
    std::string id = field_text(r, "id");
    std::string error = field_text(r, "error");
    bool build = error.find("build") != std::string::npos;
    out << "  " << id << "  " << field_sha(r, "commit") << "  " << error << " (see `bisectctl logs "
        << (build ? "build " : "request ") << id << "`)\n";
  }
}

std::string stddev_text(const nlohmann::json& commit) {
  auto pct = field_number(commit, "stddev_pct");
  if (!pct) {
    return "-";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "±%.1f%%", *pct);
  return buffer;
}

Status show(Context& context, const ShowOptions& options) {
  BISECTD_TRY_ASSIGN(long long id, parse_id(options.id));
  std::string path = "/api/v1/bisections/" + std::to_string(id);
  BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_json(path));
  if (options.json) {
    context.print_json(reply);
  } else {
    context.out() << render_bisection(reply, std::time(nullptr));
  }
  return {};
}

Status report(Context& context, const ShowOptions& options) {
  BISECTD_TRY_ASSIGN(long long id, parse_id(options.id));
  std::string path = "/api/v1/bisections/" + std::to_string(id) + "/report" + (options.all ? "?all=1" : "");
  BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_json(path));
  if (options.json) {
    context.print_json(reply);
  } else if (reply.contains("text") && reply["text"].is_string()) {
    context.out() << reply["text"].get<std::string>(); // exactly the mail, byte for byte
    if (auto note = mail_note(reply.value("mail", nlohmann::json())); !note.empty()) {
      context.err() << note << '\n'; // stdout stays the mail
    }
  } else {
    return make_error(ErrorCode::generic, "bisection " + std::to_string(id) + ": report has no text");
  }
  return {};
}

} // namespace

std::string verdict_text(const nlohmann::json& bisection) {
  if (no_change(bisection)) {
    return no_change_text(bisection);
  }
  std::string verdict = field_text(bisection, "verdict");
  if (verdict == "budget_exhausted") {
    return "budget spent before one commit was certain";
  }
  return verdict == "ambiguous" ? "only commits that cannot be built or run separate the candidates" : "";
}

std::string mail_note(const nlohmann::json& mail) {
  std::string state = field_text(mail, "state");
  if (!mail.is_object() || state == "-" || state == "sent") {
    return "";
  }
  std::string lead = state == "not_mailed" ? "not mailed" : state == "failed" ? "mail failed" : "mail " + state;
  return "(" + lead + ": " + field_text(mail, "why") + ")";
}

namespace {

CLI::App* add_id_command(CLI::App& app, const char* name, const char* help, ShowOptions& options) {
  CLI::App* command = app.add_subcommand(name, help);
  command->add_option("ID", options.id, "bisection id")->required();
  command->add_flag("--json", options.json, "print the daemon's JSON reply");
  return command;
}

} // namespace

std::string render_tested(const nlohmann::json& tested) {
  Table table({"#", "COMMIT", "STATUS", "N", "MEAN", "STDDEV", "SUBJECT"},
              {Align::right, Align::left, Align::left, Align::right, Align::right, Align::right});
  for (const auto& commit : tested) {
    auto samples = commit.value("samples", nlohmann::json::array());
    auto mean = field_number(commit, "mean");
    table.add_row({field_text(commit, "index"), field_sha(commit, "commit"), field_text(commit, "status"),
                   std::to_string(samples.is_array() ? samples.size() : 0), mean ? format_number(*mean) : "-",
                   stddev_text(commit), field_text(commit, "subject")});
  }
  return table.render();
}

std::string render_bisection(const nlohmann::json& bisection, std::int64_t now) {
  std::ostringstream out;
  render_header(out, bisection, now);
  const auto tested = bisection.value("tested", nlohmann::json::array());
  if (tested.is_array() && !tested.empty()) {
    out << "\ntested commits:\n" << render_tested(tested);
    bool skipped = false;
    for (const auto& commit : tested) { // why each skipped commit could not be measured
      if (commit.contains("skipped_because")) {
        out << "skipped " << field_sha(commit, "commit") << ": " << field_text(commit, "skipped_because") << "\n";
      }
      skipped = skipped || field_text(commit, "status") == "skipped";
    }
    if (skipped) { // a prebuild's failure has no request: the commit leads to its log
      out << "(why a commit was skipped: `bisectctl logs build COMMIT --tree " << field_text(bisection, "tree")
          << "`)\n";
    }
  }
  render_verification(out, bisection);
  render_requests(out, bisection);
  render_failures(out, bisection);
  render_events(out, bisection);
  return out.str();
}

void register_show_commands(CLI::App& app, Context& context, Registry& registry) {
  auto show_options = std::make_shared<ShowOptions>();
  CLI::App* show_command = add_id_command(app, "show", "show a bisection in detail", *show_options);
  registry.add(show_command, [&context, show_options] { return show(context, *show_options); });

  auto report_options = std::make_shared<ShowOptions>();
  CLI::App* report_command = add_id_command(app, "report", "print the report mail of a bisection", *report_options);
  report_command->add_flag("--all", report_options->all,
                           "with every significant row of the comparison table (the mail shows at most 30)");
  registry.add(report_command, [&context, report_options] { return report(context, *report_options); });
}

} // namespace bisectd::cli
