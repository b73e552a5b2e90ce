// Benchmark output → metrics. Policy: be lenient with the output (logs mix progress text with results)
// and strict with what counts as a value, so a stray line never becomes a bogus sample.
// LKP: a key printed several times keeps the mean of its values (LKP's stats.json averages a series).

#include "lab/metrics.hpp"

#include "base/strings.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <optional>

namespace bisectd::lab {

namespace {

// A whole-string finite number ("12", "-3.5e2"); nullopt for anything else ("12ms", "nan", "").
std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  if (text.front() == '+') {
    text.remove_prefix(1);
  }
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

bool is_metric_name(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == ':' || static_cast<unsigned char>(c) < 0x20) {
      return false;
    }
  }
  return true;
}

std::map<std::string, double> parse_lkp(std::string_view output) {
  std::map<std::string, std::pair<double, int>> sums;
  for (const auto& line : base::split_lines(output)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    auto name = base::trim(std::string_view(line).substr(0, colon));
    auto value = parse_number(base::trim(std::string_view(line).substr(colon + 1)));
    if (is_metric_name(name) && value) {
      auto& [sum, count] = sums[std::string(name)];
      sum += *value;
      ++count;
    }
  }
  std::map<std::string, double> metrics;
  for (const auto& [name, sum_count] : sums) {
    metrics[name] = sum_count.first / sum_count.second;
  }
  return metrics;
}

// End (one past) of the balanced {...} starting at `start`, honouring strings; npos when unbalanced.
std::size_t object_end(std::string_view text, std::size_t start) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

void flatten(const nlohmann::json& value, const std::string& prefix, std::map<std::string, double>& out) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      flatten(member, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else if (value.is_number() && std::isfinite(value.get<double>()) && !prefix.empty()) {
    out[prefix] = value.get<double>();
  }
}

// The last top-level object: a '{' that does not start valid JSON (log text) is skipped, and objects
// nested in a found one are not candidates.
std::optional<nlohmann::json> last_object(std::string_view output) {
  std::optional<nlohmann::json> last;
  std::size_t pos = output.find('{');
  while (pos != std::string_view::npos) {
    auto end = object_end(output, pos);
    if (end != std::string_view::npos) {
      auto parsed = nlohmann::json::parse(output.begin() + static_cast<std::ptrdiff_t>(pos),
                                          output.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
      if (!parsed.is_discarded() && parsed.is_object()) {
        last = std::move(parsed);
        pos = output.find('{', end);
        continue;
      }
    }
    pos = output.find('{', pos + 1);
  }
  return last;
}

std::map<std::string, double> parse_json(std::string_view output) {
  std::map<std::string, double> metrics;
  if (auto object = last_object(output)) {
    flatten(*object, "", metrics);
  }
  return metrics;
}

// At most 40 bytes of benchmark output for an error line: control bytes become '?'.
std::string excerpt(std::string_view text) {
  std::string out(text.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = '?';
    }
  }
  return text.size() > 40 ? out + "..." : out;
}

// Why an LKP output has no value for `primary`: the first line naming it whose value is not a number.
std::string lkp_missing_reason(std::string_view output, std::string_view primary) {
  int number = 0;
  for (const auto& line : base::split_lines(output)) {
    ++number;
    auto colon = line.find(':');
    if (colon != std::string::npos && base::trim(std::string_view(line).substr(0, colon)) == primary) {
      auto value = base::trim(std::string_view(line).substr(colon + 1));
      return "line " + std::to_string(number) + ": '" + excerpt(value) + "' is not a finite number";
    }
  }
  return "";
}

// Why the last JSON object of the output has no numeric `primary` (a dotted path into nested objects).
std::string json_missing_reason(std::string_view output, std::string_view primary) {
  auto object = last_object(output);
  if (!object) {
    return "no JSON object in the output";
  }
  const nlohmann::json* at = &*object;
  for (auto key : base::split(primary, '.')) {
    if (!at->is_object() || !at->contains(key)) {
      return "";
    }
    at = &(*at)[key];
  }
  return at->is_number() ? "it is not a finite number" : std::string("it is a ") + at->type_name() + ", not a number";
}

std::string missing_primary_error(std::string_view output, const RunSpec& spec) {
  std::string reason;
  if (base::trim(output).empty()) {
    reason = "the output is empty";
  } else if (spec.format == MetricFormat::json) {
    reason = json_missing_reason(output, spec.primary);
  } else {
    reason = lkp_missing_reason(output, spec.primary);
  }
  auto error = "primary metric '" + spec.primary + "' missing from the output";
  return reason.empty() ? error : error + " (" + reason + ")";
}

} // namespace

std::map<std::string, double> parse_metrics(std::string_view output, MetricFormat format) {
  return format == MetricFormat::json ? parse_json(output) : parse_lkp(output);
}

void judge_run(RunResult& run, std::string_view output, const RunSpec& spec, std::string exit_problem) {
  run.metrics = parse_metrics(output, spec.format);
  if (!exit_problem.empty()) {
    run.error = std::move(exit_problem);
  } else if (!spec.primary.empty() && !run.metrics.contains(spec.primary)) {
    run.error = missing_primary_error(output, spec);
  } else {
    run.error.clear();
  }
  run.ok = run.error.empty();
}

} // namespace bisectd::lab
