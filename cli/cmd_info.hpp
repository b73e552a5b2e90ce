#pragma once
// Read-only views of the daemon: `status`, `machines`, `results COMMIT`, `noise`.

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace bisectd::cli {

// `status`: version and uptime, queue counts, bisection counts, then the machines table.
std::string render_status(const nlohmann::json& status);

// The machines table: NAME GROUP BACKEND STATE CURRENT DESCRIPTION.
std::string render_machines(const nlohmann::json& machines);

// A commit's flags (`results`): JOB VARIANT FLAG FAILURES EFFECT WHY under a line naming `commit clear`; "" for none.
std::string render_flags(const nlohmann::json& flags);

// `results`: its flags, then one row per sample; metric columns when there are few metrics, else one row per metric.
std::string render_results(const nlohmann::json& results);

// `noise`: METRIC COMMITS RUNS RUN_SIGMA COMMIT_SIGMA HEAVY_TAILED BIMODAL RUNS_FOR_THRESHOLD.
std::string render_noise(const nlohmann::json& noise);

void register_info_commands(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
