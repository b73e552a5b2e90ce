#include "cli/cmd_manage.hpp"

#include "base/strings.hpp"
#include "base/units.hpp"
#include "cli/cmd_tree.hpp"
#include "cli/format.hpp"
#include "cli/interrupt.hpp"
#include "cli/table.hpp"
#include "cli/validate.hpp"

#include <chrono>
#include <ctime>
#include <memory>

namespace bisectd::cli {
namespace {

// How often `logs --follow` asks for more while the request is still open.
constexpr std::chrono::seconds k_follow_pause{1};

struct ActionOptions {
  std::string id;
  bool purge = false;
  bool json = false;
};

Status post_and_say(Context& context, const std::string& path, const nlohmann::json& body, bool json,
                    const std::string& said) {
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.post_json(path, body));
  if (json) {
    context.print_json(reply);
  } else {
    context.out() << said << '\n';
  }
  return {};
}

Status bisection_action(Context& context, const ActionOptions& options, const std::string& action) {
  BISECTD_TRY_ASSIGN(long long id, parse_id(options.id));
  std::string path = "/api/v1/bisections/" + std::to_string(id) + "/" + action;
  return post_and_say(context, path, nlohmann::json::object(), options.json,
                      (action == "cancel" ? "cancelled bisection " : "retrying bisection ") + std::to_string(id));
}

Status bisection_remove(Context& context, const ActionOptions& options) {
  BISECTD_TRY_ASSIGN(long long id, parse_id(options.id));
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
  std::string path = "/api/v1/bisections/" + std::to_string(id) + (options.purge ? "?purge=1" : "");
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.delete_json(path));
  if (options.json) {
    context.print_json(reply);
  } else {
    context.out() << "removed bisection " << id;
    if (options.purge) {
      context.out() << " and " << field_int(reply, "purged_samples") << " samples";
    }
    context.out() << '\n';
  }
  return {};
}

void add_bisection_commands(CLI::App& app, Context& context, Registry& registry) {
  CLI::App* bisect = app.get_subcommand("bisect");
  for (const char* action : {"cancel", "retry"}) {
    auto options = std::make_shared<ActionOptions>();
    CLI::App* command = bisect->add_subcommand(
      action, std::string(action) == "cancel"
                ? "stop a running bisection: its queued work is dropped, its samples stay"
                : "run a failed or cancelled bisection again from where it stopped (its samples are reused)");
    command->add_option("ID", options->id, "bisection id")->required();
    command->add_flag("--json", options->json, "print the daemon's JSON reply");
    registry.add(command, [&context, options, action = std::string(action)] {
      return bisection_action(context, *options, action);
    });
  }
  auto options = std::make_shared<ActionOptions>();
  CLI::App* rm = app.get_subcommand("bisections")->add_subcommand("rm", "delete a bisection (its samples stay)");
  rm->add_option("ID", options->id, "bisection id")->required();
  rm->add_flag("--purge", options->purge, "delete the samples measured for it too");
  rm->add_flag("--json", options->json, "print the daemon's JSON reply");
  registry.add(rm, [&context, options] { return bisection_remove(context, *options); });
}

struct TreeSetOptions {
  std::string name;
  std::string job_file;
  std::vector<std::string> notify;
  bool clear_notify = false;
  std::optional<std::string> poll_interval;
  std::optional<std::string> visibility;
  bool json = false;
};

Result<nlohmann::json> tree_set_body(const TreeSetOptions& options) {
  nlohmann::json body = nlohmann::json::object();
  if (!options.job_file.empty()) {
    BISECTD_TRY_ASSIGN(body, job_file_fields(options.job_file));
  }
  if (options.clear_notify || !options.notify.empty()) {
    BISECTD_TRY(validate_notify(options.notify));
    body["notify"] = options.notify;
  }
  if (options.poll_interval) {
    BISECTD_TRY_ASSIGN(std::int64_t seconds, parse_duration_seconds(*options.poll_interval, "--poll-interval"));
    body["poll_interval_s"] = seconds;
  }
  if (options.visibility) {
    body["private"] = *options.visibility == "private";
  }
  if (body.empty()) {
    return make_error(ErrorCode::invalid_input,
                      "tree set: nothing to change (give --job, --notify, --no-notify, --poll-interval, "
                      "--public or --private)");
  }
  return body;
}

Status tree_set(Context& context, const TreeSetOptions& options) {
  BISECTD_TRY(validate_name(options.name, "tree name"));
  BISECTD_TRY_ASSIGN(nlohmann::json body, tree_set_body(options));
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.post_json("/api/v1/trees/" + url_encode(options.name), body));
  if (options.json) {
    context.print_json(reply);
  } else {
    context.out() << render_tree(reply.value("tree", nlohmann::json::object()));
  }
  return {};
}

Status tree_show(Context& context, const std::string& name, bool json) {
  BISECTD_TRY(validate_name(name, "tree name"));
  BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_json("/api/v1/trees/" + url_encode(name)));
  if (json) {
    context.print_json(reply);
  } else {
    context.out() << render_tree(reply.value("tree", nlohmann::json::object()));
  }
  return {};
}

void add_tree_commands(CLI::App& app, Context& context, Registry& registry) {
  CLI::App* tree = app.get_subcommand("tree");
  auto show_name = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* show = tree->add_subcommand(
    "show", "show one tree: its job, branches (newest head, last measured head, last error), next poll, notify list");
  show->add_option("NAME", *show_name, "tree name")->required();
  show->add_flag("--json", *show_json, "print the daemon's JSON reply");
  registry.add(show, [&context, show_name, show_json] { return tree_show(context, *show_name, *show_json); });

  auto options = std::make_shared<TreeSetOptions>();
  CLI::App* set = tree->add_subcommand("set", "change a tree without re-adding it");
  set->add_option("NAME", options->name, "tree name")->required();
  set->add_option("--job", options->job_file, "new job file (YAML); new work uses it");
  set->add_option("--notify", options->notify, "the new notify list (repeatable; replaces the old one)")
    ->allow_extra_args(false);
  set->add_flag("--no-notify", options->clear_notify, "empty the notify list");
  set->add_option("--poll-interval", options->poll_interval, "time between fetches: 60, 60s, 5m, 1h");
  set->add_flag_callback(
    "--public", [options] { options->visibility = "public"; },
    "mail reports to the culprit's author, trailer people and maintainers too");
  set->add_flag_callback(
    "--private", [options] { options->visibility = "private"; }, "mail reports to the notify list only");
  set->add_flag("--json", options->json, "print the daemon's JSON reply");
  registry.add(set, [&context, options] { return tree_set(context, *options); });
}

struct DetectionsOptions {
  std::string tree;
  bool json = false;
};

Status list_detections(Context& context, const DetectionsOptions& options) {
  if (!options.tree.empty()) {
    BISECTD_TRY(validate_name(options.tree, "--tree"));
  }
  BISECTD_TRY_ASSIGN(
    nlohmann::json reply,
    context.reader().get_all_pages("/api/v1/detections" + query_string({{"tree", options.tree}}), "detections"));
  if (options.json) {
    context.print_json(reply);
  } else {
    context.out() << render_detections(reply, std::time(nullptr));
  }
  return {};
}

struct LogsOptions {
  std::string kind;
  std::string id;
  std::string tree; // with --tree, ID is a commit of that tree (build logs only)
  std::string job;
  std::uint64_t offset = 0;
  bool follow = false;
};

// The log's path from `offset`, and what it is the log of ("request 12", "commit abc1234"). ID is a request id, or
// with --tree a revision of that tree, whose build log is found by commit (a prebuild's too, which has no request).
Result<std::pair<std::string, std::string>> logs_target(const LogsOptions& options) {
  if (options.tree.empty()) {
    if (!options.job.empty()) {
      return make_error(ErrorCode::invalid_input, "logs: --job needs --tree (it names the build of a commit)");
    }
    auto id = parse_id(options.id, "request id");
    if (!id) {
      return make_error(id.error().code, id.error().message +
                                           (options.kind == "build" ? " (or a commit, with --tree TREE)" : ""));
    }
    return std::pair{"/api/v1/logs/" + options.kind + "/" + std::to_string(*id), "request " + std::to_string(*id)};
  }
  if (options.kind != "build") {
    return make_error(ErrorCode::invalid_input,
                      "logs " + options.kind + ": --tree works with `logs build` only (the " + options.kind +
                        " logs belong to a request: `bisectctl show ID` lists them)");
  }
  BISECTD_TRY(validate_name(options.tree, "--tree"));
  if (!options.job.empty()) {
    BISECTD_TRY(validate_name(options.job, "--job"));
  }
  if (options.id.empty() || options.id.find_first_of(" \n\t") != std::string::npos) {
    return make_error(ErrorCode::invalid_input, "COMMIT '" + options.id + "' is not a revision");
  }
  auto query = query_string({{"tree", options.tree}, {"commit", options.id}, {"job", options.job}});
  return std::pair{"/api/v1/logs/build" + query, "commit " + options.id};
}

// Prints the log from `offset`; with `follow`, keeps asking for more until the request has ended.
Status print_logs(Context& context, const LogsOptions& options) {
  BISECTD_TRY_ASSIGN(auto target, logs_target(options));
  const auto& [base_path, what] = target;
  std::uint64_t offset = options.offset;
  for (;;) {
    std::string path = base_path + (base_path.find('?') == std::string::npos ? "?" : "&") + "offset=" +
                       std::to_string(offset);
    BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_json(path));
    context.out() << reply.value("text", "") << std::flush;
    auto next = reply.value("next_offset", offset);
    bool complete = reply.value("complete", true);
    if (offset == options.offset && next == offset && !options.follow) {
      context.err() << "(no " << options.kind << " log yet for " << what << ": "
                    << reply.value("path", std::string("-")) << ")\n";
    }
    if (next > offset) {
      offset = next;
      continue; // a slice was full: read on at once
    }
    if (!options.follow || complete) {
      return {};
    }
    if (!sleep_unless_interrupted(k_follow_pause)) {
      return make_error(ErrorCode::cancelled, "interrupted");
    }
  }
}

void add_read_commands(CLI::App& app, Context& context, Registry& registry) {
  auto detections = std::make_shared<DetectionsOptions>();
  CLI::App* list = app.add_subcommand(
    "detections", "every head the watcher measured and its decision: baseline, below threshold, confirming, confirmed "
                  "(bisection id), not confirmed, failed (why, request id), rewritten history");
  list->add_option("--tree", detections->tree, "only this tree");
  list->add_flag("--json", detections->json, "print the daemon's JSON reply");
  registry.add(list, [&context, detections] { return list_detections(context, *detections); });

  auto logs = std::make_shared<LogsOptions>();
  CLI::App* command = app.add_subcommand(
    "logs", "print a request's logs: its runs, its build or its console; or a commit's build log (--tree)");
  command->add_option("KIND", logs->kind, "request (the runs), build or console")
    ->required()
    ->check(CLI::IsMember({"request", "build", "console"}));
  command->add_option("ID", logs->id,
                      "request id (as in `bisectctl show` and `bisectctl queue`), or with --tree a commit (sha, "
                      "prefix or ref)")
    ->required();
  command->add_option("--tree", logs->tree,
                      "`logs build COMMIT --tree T`: the build log of that commit of tree T (a prebuild's too)");
  command->add_option("--job", logs->job, "with --tree: the build for this job (default: the tree's job)");
  command->add_option("--offset", logs->offset, "start at this byte");
  command->add_flag("-f,--follow", logs->follow, "keep printing while the request runs");
  registry.add(command, [&context, logs] { return print_logs(context, *logs); });
}

} // namespace

std::string render_detections(const nlohmann::json& reply, std::int64_t now) {
  Table table({"ID", "TREE", "BRANCH", "METRIC", "HEADS", "DECISION", "AGE"},
              {Align::right, Align::left, Align::left, Align::left, Align::left, Align::left, Align::right});
  for (const auto& d : reply.value("detections", nlohmann::json::array())) {
    bool first = !d.contains("good") || !d["good"].is_string(); // a baseline: one head
    auto heads = first ? field_sha(d, "bad") : field_sha(d, "good") + ".." + field_sha(d, "bad");
    if (d.value("rewritten", false)) {
      heads += " (rewritten)";
    }
    table.add_row({std::to_string(field_int(d, "id")), field_text(d, "tree"), field_text(d, "branch"),
                   field_text(d, "metric"), heads, field_text(d, "decision"), format_age(d, "created_at", now)});
  }
  return table.rows() == 0 ? std::string("no detections\n") : table.render();
}

namespace {

// One line per branch: its newest head, the last head measured, and why it is not watched.
std::string render_branch_states(const nlohmann::json& tree) {
  std::string out;
  const auto states = tree.value("branch_states", nlohmann::json::object()); // items() must not outlive it
  for (const auto& [branch, state] : states.items()) {
    out += "  " + base::escape_control(branch, base::LineBreaks::escape) + ": head " + field_sha(state, "head") +
           ", last measured " + field_sha(state, "measured");
    if (state.contains("error") && state["error"].is_string()) {
      out += ", not watched since " + field_text(state, "error_since") + ": " + field_text(state, "error");
    }
    out += "\n";
  }
  return out;
}

} // namespace

std::string render_tree(const nlohmann::json& tree) {
  auto list = [&](const char* key) {
    std::vector<std::string> items;
    for (const auto& item : tree.value(key, nlohmann::json::array())) {
      items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    }
    return items.empty() ? std::string("-") : base::join(items, ", ");
  };
  std::string heads;
  const auto head_shas = tree.value("heads", nlohmann::json::object()); // items() must not outlive it
  for (const auto& [branch, sha] : head_shas.items()) {
    heads +=
      (heads.empty() ? "" : ", ") + branch + " " + (sha.is_string() ? base::short_sha(sha.get<std::string>()) : "-");
  }
  std::string poll = tree.contains("poll_interval_s") && tree["poll_interval_s"].is_number()
                       ? base::format_duration(std::chrono::seconds(tree["poll_interval_s"].get<std::int64_t>()))
                       : "-";
  std::string watch =
    tree.contains("watch_error") && tree["watch_error"].is_string()
      ? "failing since " + field_text(tree, "watch_error_since") + ": " + field_text(tree, "watch_error")
      : "ok";
  return "tree:     " + field_text(tree, "name") + "\n" + "url:      " + field_text(tree, "url") + "\n" +
         "branches: " + list("branches") + "\n" + "heads:    " + (heads.empty() ? "-" : heads) + "\n" +
         "watch:    " + watch + "\n" + render_branch_states(tree) + "job:      " + field_text(tree, "job") + "\n" +
         "poll:     " + poll + "\n" + "next:     " + field_text(tree, "next_poll") + "\n" +
         "notify:   " + list("notify") + "\n" +
         "mail:     " + (tree.value("private", true) ? "private (notify list only)" : "public") + "\n";
}

void register_manage_commands(CLI::App& app, Context& context, Registry& registry) {
  add_bisection_commands(app, context, registry);
  add_tree_commands(app, context, registry);
  add_read_commands(app, context, registry);
}

} // namespace bisectd::cli
