#pragma once
// `bisectctl bisect start` and `bisectctl bisections`: start a bisection, list them.

#include "base/error.hpp"
#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bisectd::cli {

struct BisectStartOptions {
  std::string tree;
  std::string good;
  std::string bad;
  std::string job; // empty: the tree's job
  bool json = false;
};

// Validates the arguments (usage errors) and builds the POST /api/v1/bisections body.
Result<nlohmann::json> bisect_start_request(const BisectStartOptions& options);

// The `bisections` table: ID TREE STATE GOOD BAD CULPRIT P RUNS BUILDS AGE (`now` in Unix seconds).
std::string render_bisections(const nlohmann::json& reply, std::int64_t now);

void register_bisect_commands(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
