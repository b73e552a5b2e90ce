#include "cli/cmd_tree.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "base/units.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/validate.hpp"

#include <filesystem>
#include <memory>

namespace bisectd::cli {
namespace {

// Registering a tree clones its mirror before the daemon answers: allow for a slow clone.
constexpr std::chrono::minutes k_tree_add_timeout{30};

Status validate_tree_add(const TreeAddOptions& options) {
  BISECTD_TRY(validate_name(options.name, "tree name"));
  BISECTD_TRY(validate_url(options.url));
  if (options.branches.empty()) {
    return usage_error("--branch: at least one branch is required");
  }
  for (const auto& branch : options.branches) {
    BISECTD_TRY(validate_rev(branch, "--branch"));
  }
  BISECTD_TRY(validate_notify(options.notify));
  if (options.poll_interval) {
    BISECTD_TRY(parse_duration_seconds(*options.poll_interval, "--poll-interval"));
  }
  return {};
}

Result<std::string> read_job_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(ErrorCode::io, "job file " + path.string() + ": is a directory");
  }
  auto text = base::read_file(path);
  if (!text) {
    return make_error(text.error().code, "job file " + text.error().message);
  }
  return text;
}

std::string join_array(const nlohmann::json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_array() || object[key].empty()) {
    return "-";
  }
  std::vector<std::string> parts;
  for (const auto& item : object[key]) {
    parts.push_back(item.is_string() ? item.get<std::string>() : item.dump());
  }
  return base::join(parts, ",");
}

std::string heads_text(const nlohmann::json& tree) {
  if (!tree.contains("heads") || !tree["heads"].is_object() || tree["heads"].empty()) {
    return "-";
  }
  std::vector<std::string> parts;
  for (const auto& [branch, sha] : tree["heads"].items()) {
    parts.push_back(branch + "=" + (sha.is_string() ? base::short_sha(sha.get<std::string>()) : "-"));
  }
  return base::join(parts, ",");
}

Status tree_add(Context& context, const TreeAddOptions& options) {
  BISECTD_TRY_ASSIGN(nlohmann::json body, tree_add_request(options));
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer(k_tree_add_timeout));
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.post_json("/api/v1/trees", body));
  if (options.json) {
    context.print_json(reply);
    return {};
  }
  const nlohmann::json& tree = reply.contains("tree") ? reply["tree"] : reply;
  context.out() << "added tree " << field_text(tree, "name") << " (job " << field_text(tree, "job") << ", branches "
                << join_array(tree, "branches") << ", heads " << heads_text(tree) << ")\n";
  return {};
}

Status tree_list(Context& context, bool json) {
  BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_all_pages("/api/v1/trees", "trees"));
  if (json) {
    context.print_json(reply);
  } else {
    context.out() << render_trees(reply);
  }
  return {};
}

Status tree_remove(Context& context, const std::string& name, bool json) {
  BISECTD_TRY(validate_name(name, "tree name"));
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.delete_json("/api/v1/trees/" + url_encode(name)));
  if (json) {
    context.print_json(reply);
  } else {
    context.out() << "removed tree " << name << '\n';
  }
  return {};
}

} // namespace

Result<nlohmann::json> job_file_fields(const std::string& job_file) {
  std::error_code ec;
  std::filesystem::path job_path = std::filesystem::absolute(job_file, ec);
  if (ec) {
    return make_error(ErrorCode::io, "job file " + job_file + ": " + ec.message());
  }
  BISECTD_TRY_ASSIGN(std::string job_yaml, read_job_file(job_path.lexically_normal()));
  return nlohmann::json{{"job_yaml", job_yaml}, {"job_path", job_path.lexically_normal().string()}};
}

Result<nlohmann::json> tree_add_request(const TreeAddOptions& options) {
  BISECTD_TRY(validate_tree_add(options));
  BISECTD_TRY_ASSIGN(nlohmann::json body, job_file_fields(options.job_file));
  body.update({{"name", options.name},
               {"url", options.url},
               {"branches", options.branches},
               {"notify", options.notify},
               {"private", !options.is_public}});
  if (options.poll_interval) {
    BISECTD_TRY_ASSIGN(body["poll_interval_s"], parse_duration_seconds(*options.poll_interval, "--poll-interval"));
  }
  return body;
}

std::string render_trees(const nlohmann::json& reply) {
  Table table({"NAME", "URL", "BRANCHES", "JOB", "POLL", "NOTIFY", "HEADS"},
              {Align::left, Align::left, Align::left, Align::left, Align::right});
  for (const auto& tree : reply.value("trees", nlohmann::json::array())) {
    std::string poll = tree.contains("poll_interval_s") && tree["poll_interval_s"].is_number()
                         ? base::format_duration(std::chrono::seconds(tree["poll_interval_s"].get<std::int64_t>()))
                         : "-";
    table.add_row({field_text(tree, "name"), field_text(tree, "url"), join_array(tree, "branches"),
                   field_text(tree, "job"), poll, join_array(tree, "notify"), heads_text(tree)});
  }
  return table.rows() == 0 ? std::string("no trees\n") : table.render();
}

void register_tree_commands(CLI::App& app, Context& context, Registry& registry) {
  CLI::App* tree = app.add_subcommand("tree", "register, list and remove watched trees");
  tree->require_subcommand(1);

  auto add_options = std::make_shared<TreeAddOptions>();
  CLI::App* add = tree->add_subcommand("add", "register a tree (the daemon mirrors it first)");
  add->add_option("NAME", add_options->name, "tree name: [a-z0-9][a-z0-9._-]*")->required();
  add->add_option("URL", add_options->url, "git URL or local path")->required();
  add->add_option("--branch", add_options->branches, "branch to watch (repeatable)")
    ->required()
    ->allow_extra_args(false);
  add->add_option("--job", add_options->job_file, "job file (YAML)")->required();
  add->add_option("--notify", add_options->notify, "mail address to notify (repeatable)")->allow_extra_args(false);
  add->add_option("--poll-interval", add_options->poll_interval, "time between fetches: 60, 60s, 5m, 1h");
  add->add_flag("--public", add_options->is_public,
                "mail reports to the culprit's author, trailer people and maintainers too (default: private, "
                "the --notify list only)");
  add->add_flag("--json", add_options->json, "print the daemon's JSON reply");
  registry.add(add, [&context, add_options] { return tree_add(context, *add_options); });

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = tree->add_subcommand("list", "list registered trees");
  list->add_flag("--json", *list_json, "print the daemon's JSON reply");
  registry.add(list, [&context, list_json] { return tree_list(context, *list_json); });

  auto remove_name = std::make_shared<std::string>();
  auto remove_json = std::make_shared<bool>(false);
  CLI::App* remove = tree->add_subcommand("remove", "stop watching a tree (its results stay)");
  remove->add_option("NAME", *remove_name, "tree name")->required();
  remove->add_flag("--json", *remove_json, "print the daemon's JSON reply");
  registry.add(remove,
               [&context, remove_name, remove_json] { return tree_remove(context, *remove_name, *remove_json); });
}

} // namespace bisectd::cli
