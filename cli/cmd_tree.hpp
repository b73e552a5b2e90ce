#pragma once
// `bisectctl tree add|list|remove`: register, list and forget watched trees.

#include "base/error.hpp"
#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bisectd::cli {

struct TreeAddOptions {
  std::string name;
  std::string url;
  std::vector<std::string> branches;
  std::string job_file;
  std::vector<std::string> notify;
  std::optional<std::string> poll_interval; // "60s", "5m", "1h" or bare seconds
  bool is_public = false;                   // mail culprits' authors and trailer people too, not only the notify list
  bool json = false;
};

// {"job_yaml", "job_path"} of a job file as the daemon takes it: the text and the file's absolute path.
Result<nlohmann::json> job_file_fields(const std::string& job_file);

// Validates the arguments (usage errors, exit 2) and builds the POST /api/v1/trees body; reads the
// job file (errors name it, exit 1).
Result<nlohmann::json> tree_add_request(const TreeAddOptions& options);

// The `tree list` table: NAME URL BRANCHES JOB POLL NOTIFY HEADS.
std::string render_trees(const nlohmann::json& reply);

void register_tree_commands(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
