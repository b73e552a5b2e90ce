#pragma once
// Offline commands (no daemon): `midpoint` (the commit git bisect would test next) and `detect`
// (change points of a benchmark series in a file).

#include "bisect/detect.hpp"
#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bisectd::cli {

// The `detect --json` object: {"change_points": [{"index", "id", "direction", "relative_change",
// "confidence", "p_value"}]}; "id" is null when the input had no ids.
nlohmann::json change_points_json(const std::vector<bisect::ChangePoint>& points, bool has_ids);

// The human table: INDEX [COMMIT] DIRECTION CHANGE CONFIDENCE, or a "no change points" line.
std::string render_change_points(const std::vector<bisect::ChangePoint>& points, bool has_ids,
                                 std::size_t input_points);

void register_detect_command(CLI::App& app, Context& context, Registry& registry);
void register_midpoint_command(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
