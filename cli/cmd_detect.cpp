#include "base/fs.hpp"
#include "base/strings.hpp"
#include "cli/cmd_offline.hpp"
#include "cli/detect_input.hpp"
#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/validate.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace bisectd::cli {
namespace {

struct DetectCommandOptions {
  std::string input;
  std::string threshold; // empty: bisect::DetectOptions' default
  bool json = false;
};

const char* direction_name(bisect::ShiftDirection direction) {
  return direction == bisect::ShiftDirection::up ? "up" : "down";
}

Status detect(Context& context, const DetectCommandOptions& options) {
  bisect::DetectOptions detect_options;
  if (!options.threshold.empty()) {
    BISECTD_TRY_ASSIGN(detect_options.min_relative_change, parse_threshold(options.threshold));
  }
  std::error_code ec;
  if (std::filesystem::is_directory(options.input, ec)) {
    return make_error(ErrorCode::io, options.input + ": is a directory");
  }
  BISECTD_TRY_ASSIGN(std::string text, base::read_file(options.input));
  BISECTD_TRY_ASSIGN(DetectInput input, parse_detect_input(text, options.input));
  auto points = bisect::detect_change_points(input.points, detect_options);
  if (options.json) {
    context.print_json(change_points_json(points, input.has_ids));
  } else {
    context.out() << render_change_points(points, input.has_ids, input.points.size());
  }
  return {};
}

} // namespace

nlohmann::json change_points_json(const std::vector<bisect::ChangePoint>& points, bool has_ids) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& point : points) {
    list.push_back({{"index", point.index},
                    {"id", has_ids ? nlohmann::json(point.id) : nlohmann::json(nullptr)},
                    {"direction", direction_name(point.direction)},
                    {"relative_change", point.relative_change},
                    {"confidence", point.confidence},
                    {"p_value", point.p_value},
                    {"machines", point.machines}});
  }
  return {{"change_points", list}};
}

std::string render_change_points(const std::vector<bisect::ChangePoint>& points, bool has_ids,
                                 std::size_t input_points) {
  if (points.empty()) {
    return "no change points in " + std::to_string(input_points) + " points\n";
  }
  std::vector<std::string> headers = {"INDEX", "DIRECTION", "CHANGE", "CONFIDENCE"};
  std::vector<Align> align = {Align::right, Align::left, Align::right, Align::right};
  if (has_ids) {
    headers.insert(headers.begin() + 1, "COMMIT");
    align.insert(align.begin() + 1, Align::left);
  }
  Table table(headers, align);
  for (const auto& point : points) {
    char confidence[32];
    std::snprintf(confidence, sizeof confidence, "%.3f", point.confidence);
    std::vector<std::string> row = {std::to_string(point.index), direction_name(point.direction),
                                    base::signed_percent(point.relative_change), confidence};
    if (has_ids) {
      row.insert(row.begin() + 1, point.id);
    }
    table.add_row(row);
  }
  return table.render();
}

void register_detect_command(CLI::App& app, Context& context, Registry& registry) {
  auto options = std::make_shared<DetectCommandOptions>();
  CLI::App* command = app.add_subcommand("detect", "find change points in a benchmark series (offline)");
  command
    ->add_option("--input", options->input,
                 "series file: JSON ({\"values\": [...]} or {\"commits\": [{\"id\", \"samples\", optional "
                 "\"machine\"/\"machines\", \"boot\"/\"boots\"}]}) or CSV (value | commit,value[,machine[,boot]]); "
                 "machines and boots let the detector remove machine offsets and noisy boots")
    ->required();
  command->add_option("--threshold", options->threshold, "minimum relative change, e.g. 2% (default 1%)");
  command->add_flag("--json", options->json, "print the change points as JSON");
  registry.add(command, [&context, options] { return detect(context, *options); });
}

} // namespace bisectd::cli
