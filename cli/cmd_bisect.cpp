#include "cli/cmd_bisect.hpp"

#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/validate.hpp"

#include <ctime>
#include <memory>

namespace bisectd::cli {
namespace {

struct BisectionsOptions {
  std::string tree;
  std::string state;
  bool json = false;
};

Status bisect_start(Context& context, const BisectStartOptions& options) {
  BISECTD_TRY_ASSIGN(nlohmann::json body, bisect_start_request(options));
  BISECTD_TRY_ASSIGN(HttpClient client, context.writer());
  BISECTD_TRY_ASSIGN(nlohmann::json reply, client.post_json("/api/v1/bisections", body));
  if (options.json) {
    context.print_json(reply);
  } else {
    context.out() << field_text(reply, "id") << '\n';
  }
  return {};
}

Status list_bisections(Context& context, const BisectionsOptions& options) {
  if (!options.tree.empty()) {
    BISECTD_TRY(validate_name(options.tree, "--tree"));
  }
  std::string path = "/api/v1/bisections" + query_string({{"tree", options.tree}, {"state", options.state}});
  BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_all_pages(path, "bisections"));
  if (options.json) {
    context.print_json(reply);
  } else {
    context.out() << render_bisections(reply, std::time(nullptr));
  }
  return {};
}

void add_start_command(CLI::App& bisect, Context& context, Registry& registry) {
  auto options = std::make_shared<BisectStartOptions>();
  CLI::App* start = bisect.add_subcommand("start", "start a bisection; prints its id");
  start->add_option("--tree", options->tree, "tree name")->required();
  start->add_option("--good", options->good, "a revision without the change")->required();
  start->add_option("--bad", options->bad, "a revision with the change")->required();
  start->add_option("--job", options->job, "job name (default: the tree's job)");
  start->add_flag("--json", options->json, "print the daemon's JSON reply");
  registry.add(start, [&context, options] { return bisect_start(context, *options); });
}

} // namespace

Result<nlohmann::json> bisect_start_request(const BisectStartOptions& options) {
  BISECTD_TRY(validate_name(options.tree, "--tree"));
  BISECTD_TRY(validate_rev(options.good, "--good"));
  BISECTD_TRY(validate_rev(options.bad, "--bad"));
  nlohmann::json body = {{"tree", options.tree}, {"good", options.good}, {"bad", options.bad}};
  if (!options.job.empty()) {
    BISECTD_TRY(validate_name(options.job, "--job"));
    body["job"] = options.job;
  }
  return body;
}

std::string render_bisections(const nlohmann::json& reply, std::int64_t now) {
  Table table({"ID", "TREE", "STATE", "GOOD", "BAD", "CULPRIT", "P", "RUNS", "BUILDS", "AGE"},
              {Align::right, Align::left, Align::left, Align::left, Align::left, Align::left, Align::right,
               Align::right, Align::right, Align::right});
  for (const auto& b : reply.value("bisections", nlohmann::json::array())) {
    table.add_row({field_text(b, "id"), field_text(b, "tree"), field_text(b, "state"), field_sha(b, "good"),
                   field_sha(b, "bad"), field_sha(b, "culprit"), format_probability(field_number(b, "p_culprit")),
                   field_text(b, "runs"), field_text(b, "builds"), format_age(b, "created_at", now)});
  }
  return table.rows() == 0 ? std::string("no bisections\n") : table.render();
}

void register_bisect_commands(CLI::App& app, Context& context, Registry& registry) {
  CLI::App* bisect = app.add_subcommand("bisect", "start bisections");
  bisect->require_subcommand(1);
  add_start_command(*bisect, context, registry);

  auto options = std::make_shared<BisectionsOptions>();
  CLI::App* list = app.add_subcommand("bisections", "list bisections, newest first");
  list->add_option("--tree", options->tree, "only this tree");
  list->add_option("--state", options->state, "only this state")
    ->check(CLI::IsMember({"running", "found", "not_found", "failed"}));
  list->add_flag("--json", options->json, "print the daemon's JSON reply");
  registry.add(list, [&context, options] { return list_bisections(context, *options); });
}

} // namespace bisectd::cli
