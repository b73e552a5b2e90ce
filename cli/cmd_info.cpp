#include "cli/cmd_info.hpp"

#include "base/glob.hpp"
#include "base/strings.hpp"
#include "base/units.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/validate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

namespace bisectd::cli {
namespace {

// Up to this many distinct metrics become columns of `results`; more switch to one row per metric.
constexpr std::size_t k_max_metric_columns = 5;

struct InfoOptions {
  std::string commit;
  std::string tree;
  std::string job;
  std::string metric; // results: a glob on metric names
  std::string other;  // compare: the second commit
  bool all = false;   // compare: every significant row
  bool json = false;
};

// "queued 1, building 0, ..." in the API's order (`order`), then any keys the daemon added later.
std::string counts_line(const nlohmann::json& counts, const std::vector<std::string>& order) {
  if (!counts.is_object()) {
    return "-";
  }
  std::vector<std::string> keys = order;
  for (const auto& [key, value] : counts.items()) {
    if (std::find(order.begin(), order.end(), key) == order.end()) {
      keys.push_back(key);
    }
  }
  std::vector<std::string> parts;
  for (const auto& key : keys) {
    if (counts.contains(key)) {
      parts.push_back(key + " " + field_text(counts, key.c_str()));
    }
  }
  return parts.empty() ? "-" : base::join(parts, ", ");
}

std::string percent_cell(const nlohmann::json& object, const char* key) {
  auto value = field_number(object, key);
  return value ? format_number(std::round(*value * 100.0) / 100.0) + "%" : "-";
}

std::string metric_value(const nlohmann::json& sample, const std::string& metric) {
  const auto metrics = sample.value("metrics", nlohmann::json::object());
  return metrics.is_object() && metrics.contains(metric) ? field_text(metrics, metric.c_str()) : "-";
}

// Runs a GET and prints either the JSON or the human rendering of the reply. `list_key`: the reply is a list
// answer, whose every page is fetched.
Status get_and_print(Context& context, const std::string& path, bool json,
                     const std::function<std::string(const nlohmann::json&)>& render,
                     const std::string& list_key = "") {
  auto client = context.reader();
  BISECTD_TRY_ASSIGN(nlohmann::json reply,
                     list_key.empty() ? client.get_json(path) : client.get_all_pages(path, list_key));
  if (json) {
    context.print_json(reply);
  } else {
    context.out() << render(reply);
  }
  return {};
}

// A sha (7+ hex characters) or, with --tree, a ref; `what` names the argument in the error.
Status validate_commit(const std::string& commit, const std::string& tree, const std::string& what) {
  bool sha = commit.size() >= 7 && commit.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!sha && tree.empty()) { // a ref means something only in one tree's mirror
    return make_error(ErrorCode::invalid_input,
                      what + " '" + commit + "': a ref needs --tree (or give a sha, 7+ hex characters)");
  }
  if (commit.empty() || commit.find_first_of(" \n\t") != std::string::npos) {
    return make_error(ErrorCode::invalid_input, what + " '" + commit + "' is not a revision");
  }
  return {};
}

Status results(Context& context, const InfoOptions& options) {
  BISECTD_TRY(validate_commit(options.commit, options.tree, "COMMIT"));
  if (!options.tree.empty()) {
    BISECTD_TRY(validate_name(options.tree, "--tree"));
  }
  if (auto bad = base::glob_error(options.metric); !options.metric.empty() && bad) {
    return make_error(ErrorCode::invalid_input, "--metric '" + options.metric + "': " + *bad);
  }
  std::string path = "/api/v1/results/" + url_encode(options.commit) +
                     query_string({{"tree", options.tree}, {"metric", options.metric}});
  return get_and_print(context, path, options.json, render_results, "samples");
}

// `commit clear COMMIT --tree T [--job J]`: the commit's flags for the job dropped, so it is built and measured again.
Status clear_commit(Context& context, const InfoOptions& options) {
  BISECTD_TRY(validate_name(options.tree, "--tree"));
  BISECTD_TRY(validate_commit(options.commit, options.tree, "COMMIT"));
  if (!options.job.empty()) { // default: the tree's job (the daemon knows it)
    BISECTD_TRY(validate_name(options.job, "--job"));
  }
  nlohmann::json body = {{"tree", options.tree}};
  if (!options.job.empty()) {
    body["job"] = options.job;
  }
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.post_json("/api/v1/commits/" + url_encode(options.commit) + "/clear",
                                                            body));
  if (options.json) {
    context.print_json(reply);
    return {};
  }
  context.out() << "commit " << field_text(reply, "commit") << ": " << field_text(reply, "cleared")
                << " flag(s) of job " << field_text(reply, "job") << " cleared\n";
  return {};
}

Status compare(Context& context, const InfoOptions& options) {
  BISECTD_TRY(validate_commit(options.commit, options.tree, "A"));
  BISECTD_TRY(validate_commit(options.other, options.tree, "B"));
  if (!options.tree.empty()) {
    BISECTD_TRY(validate_name(options.tree, "--tree"));
  }
  if (!options.job.empty()) {
    BISECTD_TRY(validate_name(options.job, "--job"));
  }
  std::string path = "/api/v1/compare" + query_string({{"a", options.commit},
                                                       {"b", options.other},
                                                       {"job", options.job},
                                                       {"tree", options.tree},
                                                       {"all", options.all ? "1" : ""}});
  return get_and_print(context, path, options.json, [](const nlohmann::json& reply) {
    return reply.contains("text") && reply["text"].is_string() ? reply["text"].get<std::string>() : reply.dump(2);
  });
}

Status noise(Context& context, const InfoOptions& options) {
  BISECTD_TRY(validate_name(options.tree, "--tree"));
  if (!options.job.empty()) { // default: the tree's job (the daemon knows it)
    BISECTD_TRY(validate_name(options.job, "--job"));
  }
  std::string path = "/api/v1/noise" + query_string({{"tree", options.tree}, {"job", options.job}});
  return get_and_print(context, path, options.json, render_noise, "metrics");
}

std::shared_ptr<InfoOptions> add_json_command(CLI::App& app, const char* name, const char* help, CLI::App*& command) {
  auto options = std::make_shared<InfoOptions>();
  command = app.add_subcommand(name, help);
  command->add_flag("--json", options->json, "print the daemon's JSON reply");
  return options;
}

} // namespace

std::string render_machines(const nlohmann::json& machines) {
  Table table({"NAME", "GROUP", "BACKEND", "STATE", "CURRENT", "DESCRIPTION"});
  for (const auto& m : machines) {
    table.add_row({field_text(m, "name"), field_text(m, "group"), field_text(m, "backend"), field_text(m, "state"),
                   field_sha(m, "current"), field_text(m, "description")});
  }
  return table.rows() == 0 ? std::string("no machines\n") : table.render();
}

std::string render_status(const nlohmann::json& status) {
  auto uptime = base::format_duration(std::chrono::seconds(field_int(status, "uptime_s")));
  std::string out =
    "bisectd " + field_text(status, "version") + ", up " + uptime + ", data dir " + field_text(status, "data_dir") + "\n";
  if (!status.value("sandboxed", true)) {
    out += "UNSANDBOXED: the trees' builds and benchmarks run without bwrap and can read the data dir, its token and "
           "the network: " + field_text(status, "unsandboxed_because") + "\n";
  }
  out += "queue:      " +
         counts_line(status.value("queue", nlohmann::json()), {"queued", "building", "running", "done", "failed"}) +
         "\n";
  out += "bisections: " +
         counts_line(status.value("bisections", nlohmann::json()), {"running", "found", "not_found", "failed"}) + "\n";
  out += "\n" + render_machines(status.value("machines", nlohmann::json::array()));
  for (const auto& m : status.value("machines", nlohmann::json::array())) {
    if (field_text(m, "state") == "quarantined") {
      out += "quarantined: " + field_text(m, "name") + ": " + field_text(m, "quarantine_reason") +
             " (bisectctl machine release " + field_text(m, "name") + ")\n";
    }
  }
  for (const auto& w : status.value("watch_errors", nlohmann::json::array())) {
    out += "watch failing: tree " + field_text(w, "tree") + ": " + field_text(w, "error") + " (since " +
           field_text(w, "since") + ")\n";
  }
  return out;
}

std::string render_flags(const nlohmann::json& flags) {
  if (!flags.is_array() || flags.empty()) {
    return "";
  }
  Table table({"JOB", "VARIANT", "FLAG", "FAILURES", "EFFECT", "WHY"},
              {Align::left, Align::left, Align::left, Align::right, Align::left, Align::left});
  for (const auto& f : flags) {
    auto variant = field_text(f, "variant");
    table.add_row({field_text(f, "job"), variant.empty() ? "-" : variant, field_text(f, "flag"),
                   field_text(f, "count"), field_text(f, "effect"), field_text(f, "reason")});
  }
  return "flags (bisectctl commit clear COMMIT --tree TREE drops them):\n" + table.render();
}

std::string render_results(const nlohmann::json& results) {
  const auto samples = results.value("samples", nlohmann::json::array());
  std::set<std::string> names;
  for (const auto& sample : samples) {
    const auto metrics = sample.value("metrics", nlohmann::json::object()); // items() must not outlive it
    for (const auto& [name, value] : metrics.items()) {
      names.insert(name);
    }
  }
  std::string head = "commit " + field_text(results, "commit") + ": " + std::to_string(samples.size()) + " samples\n" +
                     render_flags(results.value("flags", nlohmann::json::array()));
  bool wide = names.size() <= k_max_metric_columns;
  std::vector<std::string> headers = {"JOB", "MACHINE", "BOOT", "RUN", "AT"};
  if (wide) {
    headers.insert(headers.end(), names.begin(), names.end());
  } else {
    headers.insert(headers.end(), {"METRIC", "VALUE"});
  }
  std::vector<Align> align(5, Align::left);
  align.resize(headers.size(), Align::right);
  align[3] = Align::right;
  Table table(headers, align);
  for (const auto& s : samples) {
    std::vector<std::string> row = {field_text(s, "job"), field_text(s, "machine"), field_text(s, "boot_id"),
                                    field_text(s, "run"), field_text(s, "created_at")};
    if (wide) {
      for (const auto& name : names) {
        row.push_back(metric_value(s, name));
      }
      table.add_row(row);
      continue;
    }
    for (const auto& name : names) {
      auto cells = row;
      cells.insert(cells.end(), {name, metric_value(s, name)});
      table.add_row(cells);
    }
  }
  return samples.empty() ? head : head + table.render();
}

std::string render_noise(const nlohmann::json& noise) {
  Table table(
    {"METRIC", "COMMITS", "RUNS", "RUN_SIGMA", "COMMIT_SIGMA", "HEAVY_TAILED", "BIMODAL", "RUNS_FOR_THRESHOLD"},
    {Align::left, Align::right, Align::right, Align::right, Align::right, Align::left, Align::left, Align::right});
  for (const auto& m : noise.value("metrics", nlohmann::json::array())) {
    table.add_row({field_text(m, "name"), field_text(m, "commits"), field_text(m, "runs"),
                   percent_cell(m, "run_sigma_pct"), percent_cell(m, "commit_sigma_pct"), field_text(m, "heavy_tailed"),
                   field_text(m, "bimodal"), field_text(m, "runs_for_threshold")});
  }
  return table.rows() == 0 ? std::string("no metrics with history yet\n") : table.render();
}

namespace {

struct CheckOptions {
  std::string name;
  bool power = false;
  bool json = false;
};

Status valid_machine_name(const std::string& name) {
  if (name.empty() || name.find_first_of("/?#% \n") != std::string::npos) {
    return usage_error("NAME: '" + name + "' is not a machine name");
  }
  return {};
}

// One line a check: "ok    reach    root@box:22 answers: ..."; a check the machine's settings do not need is "--".
std::string render_check(const nlohmann::json& reply) {
  Table table({"", "CHECK", "DETAIL"}, {Align::left, Align::left, Align::left});
  for (const auto& line : reply.value("checks", nlohmann::json::array())) {
    bool ok = line.value("ok", false);
    table.add_row({ok ? "ok" : line.value("needed", true) ? "FAIL" : "--", field_text(line, "check"),
                   field_text(line, "detail")});
  }
  return "machine " + field_text(reply, "machine") + ": " + (reply.value("ok", false) ? "ok" : "not ready") + "\n" +
         table.render();
}

Status check_machine(Context& context, const CheckOptions& options) {
  BISECTD_TRY(valid_machine_name(options.name));
  // ssh round trips with their timeouts; with --power also the box's boot.
  auto timeout = options.power ? std::chrono::minutes(20) : std::chrono::minutes(5);
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer(timeout));
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.post_json("/api/v1/machines/" + options.name + "/check",
                                                           {{"power", options.power}}));
  context.out() << (options.json ? reply.dump(2) + "\n" : render_check(reply));
  if (reply.value("ok", false)) {
    return {};
  }
  std::vector<std::string> failed;
  for (const auto& line : reply.value("checks", nlohmann::json::array())) {
    if (!line.value("ok", false) && line.value("needed", true)) {
      failed.push_back(field_text(line, "check"));
    }
  }
  return make_error(ErrorCode::generic, "machine " + options.name + " is not ready: " + base::join(failed, ", "));
}

} // namespace

void register_info_commands(CLI::App& app, Context& context, Registry& registry) {
  CLI::App* command = nullptr;
  auto status_options = add_json_command(app, "status", "daemon health, queue and machines", command);
  registry.add(command, [&context, status_options] {
    return get_and_print(context, "/api/v1/status", status_options->json, render_status);
  });

  auto machines_options = add_json_command(app, "machines", "list lab machines", command);
  registry.add(command, [&context, machines_options] {
    return get_and_print(context, "/api/v1/machines", machines_options->json, [](const nlohmann::json& r) {
      return render_machines(r.value("machines", nlohmann::json::array()));
    });
  });

  // `machine release NAME`: a quarantined machine gets visits again.
  auto machine = app.add_subcommand("machine", "act on a lab machine");
  machine->require_subcommand(1);
  auto release_name = std::make_shared<std::string>();
  auto release = machine->add_subcommand("release", "return a quarantined machine to service");
  release->add_option("NAME", *release_name, "machine name (as in the lab file)")->required();
  registry.add(release, [&context, release_name]() -> Status {
    BISECTD_TRY(valid_machine_name(*release_name));
    BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
    BISECTD_TRY_ASSIGN(nlohmann::json reply,
                       client.post_json("/api/v1/machines/" + *release_name + "/release", nlohmann::json::object()));
    context.out() << "machine " << field_text(reply, "machine") << " released\n";
    return {};
  });

  auto check_options = std::make_shared<CheckOptions>();
  auto check = machine->add_subcommand("check", "check a machine before trusting it: reach, host key, root, kexec, "
                                                "disk, copies, console, power (exit 1 when a needed check fails)");
  check->add_option("NAME", check_options->name, "machine name (as in the lab file)")->required();
  check->add_flag("--power", check_options->power, "run the power command for real and wait for the box");
  check->add_flag("--json", check_options->json, "print the daemon's JSON reply");
  registry.add(check, [&context, check_options] { return check_machine(context, *check_options); });

  auto results_options = add_json_command(app, "results", "stored samples of a commit", command);
  command->add_option("COMMIT", results_options->commit, "sha or prefix (7+ hex characters), or a ref with --tree")
    ->required();
  command->add_option("--tree", results_options->tree, "only this tree");
  command->add_option("--metric", results_options->metric,
                      "only metrics whose names match this glob ('proc-vmstat.*', 'time.*_time', 'vmstat.cpu.[us]?')");
  registry.add(command, [&context, results_options] { return results(context, *results_options); });

  // `commit clear`: a commit's flags (unbuildable, unrunnable, ...) for a job dropped.
  auto commit = app.add_subcommand("commit", "act on a commit");
  commit->require_subcommand(1);
  auto clear_options = std::make_shared<InfoOptions>();
  auto clear = commit->add_subcommand(
    "clear", "drop a commit's flags for a job (unbuildable, unbootable, unrunnable, infra): it is measured again");
  clear->add_option("COMMIT", clear_options->commit, "sha or prefix (7+ hex characters), or a ref")->required();
  clear->add_option("--tree", clear_options->tree, "the tree whose mirror resolves COMMIT")->required();
  clear->add_option("--job", clear_options->job, "job name (default: the tree's job)");
  clear->add_flag("--json", clear_options->json, "print the daemon's JSON reply");
  registry.add(clear, [&context, clear_options] { return clear_commit(context, *clear_options); });

  auto compare_options =
    add_json_command(app, "compare", "LKP comparison table of two measured commits (significant changes)", command);
  command->add_option("A", compare_options->commit, "the base commit: sha or prefix (7+ hex), or a ref with --tree")
    ->required();
  command->add_option("B", compare_options->other, "the commit compared with A")->required();
  command->add_option("--job", compare_options->job, "the job whose samples to compare (default: the only one)");
  command->add_option("--tree", compare_options->tree, "resolve refs in this tree; only its samples");
  command->add_flag("--all", compare_options->all, "every significant row (default: at most 30)");
  registry.add(command, [&context, compare_options] { return compare(context, *compare_options); });

  auto noise_options = add_json_command(app, "noise", "noise model of a job's metrics", command);
  command->add_option("--tree", noise_options->tree, "tree name")->required();
  command->add_option("--job", noise_options->job, "job name (default: the tree's job)");
  registry.add(command, [&context, noise_options] { return noise(context, *noise_options); });
}

} // namespace bisectd::cli
