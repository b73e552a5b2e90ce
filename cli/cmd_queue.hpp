#pragma once
// What the daemon holds beside bisections: `bisectctl queue` (the open requests) and `bisectctl jobs` (the jobs
// and the trees using them).

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bisectd::cli {

// `queue`: ID TREE JOB COMMIT PURPOSE FOR MACHINE STATE AGE, oldest first (`now` in Unix seconds, for ages).
std::string render_queue(const nlohmann::json& reply, std::int64_t now);

// `jobs`: NAME METRIC DIRECTION THRESHOLD TREES.
std::string render_jobs(const nlohmann::json& reply);

void register_queue_commands(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
