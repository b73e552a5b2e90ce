#include "cli/cmd_wait.hpp"

#include "base/clock.hpp"
#include "base/strings.hpp"
#include "cli/cmd_show.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/interrupt.hpp"
#include "cli/validate.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

namespace bisectd::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Without a terminal the progress goes to logs: one line this often (and on every state change).
constexpr std::chrono::seconds k_plain_interval{10};

struct WaitOptions {
  std::string id;
  std::optional<double> timeout_s;
  double interval_s = 2.0;
  bool json = false;
};

// Prints progress on stderr: rewritten in place on a terminal, plain lines every ~10 s otherwise.
class ProgressPrinter {
public:
  explicit ProgressPrinter(Context& context) : m_context(context) {}

  // `last`: the final state, printed even when the plain-line interval has not passed.
  void update(const std::string& text, bool last = false) {
    auto now = Clock::now();
    if (m_context.err_is_tty()) {
      m_context.raw_err() << '\r' << std::flush; // the control bytes are bisectctl's own, the text is not
      m_context.err() << text << std::flush;
      m_context.raw_err() << "\x1b[K" << std::flush;
      m_dirty = true;
    } else if (last || !m_printed || now - m_last_print >= k_plain_interval) {
      m_context.err() << text << '\n' << std::flush;
      m_last_print = now;
      m_printed = true;
    }
  }

  // Ends the rewritten line so later output starts on a fresh line.
  void finish() {
    if (m_dirty) {
      m_context.err() << '\n' << std::flush;
      m_dirty = false;
    }
  }

private:
  Context& m_context;
  Clock::time_point m_last_print{};
  bool m_printed = false;
  bool m_dirty = false;
};

Status finished(Context& context, const nlohmann::json& bisection, long long id, bool json) {
  std::string state = field_text(bisection, "state");
  if (json) {
    context.print_json(bisection);
  } else if (state == "found") {
    std::string subject = field_text(bisection, "culprit_subject");
    context.out() << "found " << field_text(bisection, "culprit") << (subject == "-" ? "" : " " + subject) << " (P "
                  << format_probability(field_number(bisection, "p_culprit")) << ")\n";
  }
  if (state == "found") {
    return {};
  }
  std::string why = field_text(bisection, "error");
  if (why == "-" || why.empty()) {
    why = verdict_text(bisection); // not_found: no change, or a budget spent on a set (`show` lists it)
  }
  return make_error(ErrorCode::generic, "bisection " + std::to_string(id) + " ended " + state +
                                          (why == "-" || why.empty() ? "" : ": " + why));
}

Status wait_for(Context& context, const WaitOptions& options) {
  BISECTD_TRY_ASSIGN(long long id, parse_id(options.id));
  BISECTD_TRY(validate_seconds(options.interval_s, "--interval"));
  if (options.timeout_s) {
    BISECTD_TRY(validate_seconds(*options.timeout_s, "--timeout"));
  }
  auto start = Clock::now();
  auto interval = std::chrono::milliseconds(static_cast<long long>(options.interval_s * 1000));
  std::string path = "/api/v1/bisections/" + std::to_string(id);
  ProgressPrinter progress(context);
  while (true) {
    auto reply = context.reader().get_json(path);
    if (!reply) {
      progress.finish();
      return std::unexpected(reply.error());
    }
    if (field_text(*reply, "state") != "running") {
      progress.update(progress_line(*reply, base::unix_now()), true);
      progress.finish();
      return finished(context, *reply, id, options.json);
    }
    progress.update(progress_line(*reply, base::unix_now()));
    auto elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (options.timeout_s && elapsed >= *options.timeout_s) {
      progress.finish();
      return make_error(ErrorCode::timeout, "bisection " + std::to_string(id) + ": still running after " +
                                              format_number(*options.timeout_s) + "s");
    }
    auto pause = interval;
    if (options.timeout_s) { // wake up for the deadline rather than a whole interval after it
      auto left = std::chrono::milliseconds(static_cast<long long>((*options.timeout_s - elapsed) * 1000));
      pause = std::min(pause, left);
    }
    if (!sleep_unless_interrupted(pause)) {
      progress.finish();
      return make_error(ErrorCode::cancelled, "interrupted");
    }
  }
}

} // namespace

std::size_t tested_count(const nlohmann::json& bisection) {
  std::size_t count = 0;
  const auto tested = bisection.value("tested", nlohmann::json::array());
  for (const auto& commit : tested) {
    std::string status = field_text(commit, "status");
    // "tested": measured, but not yet placed on either side of a culprit.
    count += (status == "good" || status == "bad" || status == "skipped" || status == "tested") ? 1 : 0;
  }
  return count;
}

namespace {

bool is_open(const std::string& state) { return state == "queued" || state == "building" || state == "running"; }

// "searching", "verifying" or "deciding" (nothing in flight: the engine's next step is due) while running.
std::string phase_of(const nlohmann::json& bisection, const nlohmann::json& requests) {
  std::string state = field_text(bisection, "state");
  if (state != "running") {
    return state;
  }
  bool open = false, verifying = false;
  for (const auto& r : requests) {
    if (is_open(field_text(r, "state"))) {
      open = true;
      verifying = verifying || field_text(r, "purpose") == "verify";
    }
  }
  return !open ? "deciding" : verifying ? "verifying" : "searching";
}

// "building 89abcdef01, measuring 0123456789 (layout), 2 queued": what the lab does for the bisection now.
std::string activity_of(const nlohmann::json& requests) {
  std::vector<std::string> parts;
  int queued = 0;
  for (const auto& r : requests) {
    std::string state = field_text(r, "state");
    if (state == "queued") {
      ++queued;
    } else if (state == "building" || state == "running") {
      std::string variant = field_text(r, "variant");
      parts.push_back((state == "building" ? "building " : "measuring ") + field_text(r, "commit").substr(0, 10) +
                      (variant.empty() ? "" : " (" + variant + ")"));
    }
  }
  if (queued > 0) {
    parts.push_back(std::to_string(queued) + " queued");
  }
  return base::join(parts, ", ");
}

} // namespace

std::string progress_line(const nlohmann::json& bisection, std::int64_t now) {
  const auto requests = bisection.value("requests", nlohmann::json::array());
  std::string activity = activity_of(requests);
  std::string elapsed = format_age(bisection, "created_at", now);
  return "bisection " + field_text(bisection, "id") + ": " + phase_of(bisection, requests) +
         (activity.empty() ? "" : " (" + activity + ")") + "; " + field_text(bisection, "runs") + " runs, " +
         field_text(bisection, "builds") + " builds, " + std::to_string(tested_count(bisection)) + " tested, P " +
         format_probability(field_number(bisection, "p_culprit")) + (elapsed == "-" ? "" : ", " + elapsed);
}

void register_wait_command(CLI::App& app, Context& context, Registry& registry) {
  auto options = std::make_shared<WaitOptions>();
  CLI::App* wait = app.add_subcommand("wait", "wait until a bisection ends (exit 0 when found)");
  wait->add_option("ID", options->id, "bisection id")->required();
  wait->add_option("--timeout", options->timeout_s, "give up after this many seconds (exit 1)");
  wait->add_option("--interval", options->interval_s, "seconds between polls (default 2)");
  wait->add_flag("--json", options->json, "print the final bisection as JSON");
  registry.add(wait, [&context, options] { return wait_for(context, *options); });
}

} // namespace bisectd::cli
