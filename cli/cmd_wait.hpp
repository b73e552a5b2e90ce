#pragma once
// `bisectctl wait ID`: follow a bisection until it ends, with a live progress line on stderr.

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace bisectd::cli {

// "bisection 3: verifying (measuring 89abcdef01, 1 queued); 12 runs, 5 builds, 7 tested, P 0.830, 4m" from
// GET /api/v1/bisections/ID: the phase (searching, verifying, deciding, or the final state), what the lab does
// for it now, the counts, and the time since it started (`now`: unix seconds).
std::string progress_line(const nlohmann::json& bisection, std::int64_t now);

// Number of commits measured or skipped (status good, bad, tested or skipped).
std::size_t tested_count(const nlohmann::json& bisection);

void register_wait_command(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
