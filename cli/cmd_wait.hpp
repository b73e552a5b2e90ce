#pragma once
// `bisectctl wait ID`: follow a bisection until it ends, with a live progress line on stderr.

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace bisectd::cli {

// "bisection 3: running, 12 runs, 5 builds, 7 tested, P 0.830" from GET /api/v1/bisections/ID.
std::string progress_line(const nlohmann::json& bisection);

// Number of commits measured or skipped (status good, bad, tested or skipped).
std::size_t tested_count(const nlohmann::json& bisection);

void register_wait_command(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
