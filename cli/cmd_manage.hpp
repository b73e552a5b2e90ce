#pragma once
// Operating what the daemon holds: cancel, retry and remove bisections, show and change a tree, list the
// watcher's decisions (detections) and read logs.

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bisectd::cli {

// The `detections` table: ID TREE BRANCH METRIC HEADS CHANGE P DECISION AGE (`now` in Unix seconds).
std::string render_detections(const nlohmann::json& reply, std::int64_t now);

// `tree show`: one tree's fields, one per line.
std::string render_tree(const nlohmann::json& tree);

// Adds `bisect cancel|retry`, `bisections rm`, `tree show|set`, `detections` and `logs` (after the groups that
// create `bisect`, `bisections` and `tree`).
void register_manage_commands(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
