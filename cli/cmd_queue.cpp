#include "cli/cmd_queue.hpp"

#include "base/strings.hpp"
#include "cli/format.hpp"
#include "cli/table.hpp"

#include <ctime>
#include <functional>
#include <memory>

namespace bisectd::cli {
namespace {

// Whom a request works for: "bisection 3", "detection 2", or "-".
std::string owner_text(const nlohmann::json& r) {
  if (r.contains("bisection_id") && r["bisection_id"].is_number()) {
    return "bisection " + field_text(r, "bisection_id");
  }
  if (r.contains("detection_id") && r["detection_id"].is_number()) {
    return "detection " + field_text(r, "detection_id");
  }
  return "-";
}

// "bisect", or "verify (layout)" for a verification build.
std::string purpose_text(const nlohmann::json& r) {
  std::string variant = field_text(r, "variant");
  return field_text(r, "purpose") + (variant.empty() || variant == "-" ? "" : " (" + variant + ")");
}

// "queued", "queued (attempt 2)" for one that failed before and waits for its retry.
std::string state_text(const nlohmann::json& r) {
  std::string state = field_text(r, "state");
  auto attempts = field_int(r, "attempts");
  return state == "queued" && attempts > 0 ? state + " (attempt " + std::to_string(attempts + 1) + ")" : state;
}

Status list(Context& context, const std::string& path, const std::string& key, bool json,
            const std::function<std::string(const nlohmann::json&)>& render) {
  BISECTD_TRY_ASSIGN(nlohmann::json reply, context.reader().get_all_pages(path, key));
  if (json) {
    context.print_json(reply);
  } else {
    context.out() << render(reply);
  }
  return {};
}

} // namespace

std::string render_queue(const nlohmann::json& reply, std::int64_t now) {
  Table table({"ID", "TREE", "JOB", "COMMIT", "PURPOSE", "FOR", "MACHINE", "STATE", "AGE"},
              {Align::right, Align::left, Align::left, Align::left, Align::left, Align::left, Align::left,
               Align::left, Align::right});
  for (const auto& r : reply.value("requests", nlohmann::json::array())) {
    table.add_row({field_text(r, "id"), field_text(r, "tree"), field_text(r, "job"), field_sha(r, "commit"),
                   purpose_text(r), owner_text(r), field_text(r, "machine"), state_text(r),
                   format_age(r, "created_at", now)});
  }
  return table.rows() == 0 ? std::string("no queued or running requests\n") : table.render();
}

std::string render_jobs(const nlohmann::json& reply) {
  Table table({"NAME", "METRIC", "DIRECTION", "THRESHOLD", "TREES"});
  for (const auto& j : reply.value("jobs", nlohmann::json::array())) {
    std::vector<std::string> trees;
    for (const auto& t : j.value("trees", nlohmann::json::array())) {
      trees.push_back(t.is_string() ? base::escape_control(t.get<std::string>(), base::LineBreaks::escape) : t.dump());
    }
    auto threshold = field_number(j, "threshold");
    table.add_row({field_text(j, "name"), field_text(j, "primary"), field_text(j, "direction"),
                   threshold ? "±" + format_number(*threshold * 100) + "%" : "-",
                   trees.empty() ? "- (no tree)" : base::join(trees, ", ")});
  }
  return table.rows() == 0 ? std::string("no jobs\n") : table.render();
}

void register_queue_commands(CLI::App& app, Context& context, Registry& registry) {
  auto queue_json = std::make_shared<bool>(false);
  CLI::App* queue = app.add_subcommand(
    "queue", "queued and running test requests: tree, job, commit, purpose, whom for, machine, state, age");
  queue->add_flag("--json", *queue_json, "print the daemon's JSON reply");
  registry.add(queue, [&context, queue_json] {
    return list(context, "/api/v1/queue", "requests", *queue_json,
                [](const nlohmann::json& reply) { return render_queue(reply, std::time(nullptr)); });
  });

  auto jobs_json = std::make_shared<bool>(false);
  CLI::App* jobs = app.add_subcommand("jobs", "the stored jobs: metric, direction, threshold and the trees using them");
  jobs->add_flag("--json", *jobs_json, "print the daemon's JSON reply");
  registry.add(jobs, [&context, jobs_json] { return list(context, "/api/v1/jobs", "jobs", *jobs_json, render_jobs); });
}

} // namespace bisectd::cli
