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

// Where metrics are gathered while parsing: a name past the limits is counted, never stored.
class MetricSink {
public:
  explicit MetricSink(const MetricLimits& limits) : m_limits(limits) {}

  // The running sum and count of `name`, or null when the limits drop it.
  std::pair<double, int>* slot(std::string_view name) {
    if (name.size() > m_limits.max_name_bytes) {
      ++m_parsed.dropped_long_names;
      return nullptr;
    }
    auto found = m_sums.find(name);
    if (found != m_sums.end()) {
      return &found->second;
    }
    if (m_sums.size() >= m_limits.max_metrics) {
      ++m_parsed.dropped_over_cap;
      return nullptr;
    }
    return &m_sums.emplace(std::string(name), std::pair{0.0, 0}).first->second;
  }

  void set(std::string_view name, double value) {
    if (auto* sum = slot(name)) {
      *sum = {value, 1};
    }
  }

  // The mean of every kept name.
  ParsedMetrics finish() && {
    for (const auto& [name, sum_count] : m_sums) {
      m_parsed.metrics.emplace(name, sum_count.first / sum_count.second);
    }
    return std::move(m_parsed);
  }

private:
  const MetricLimits& m_limits;
  std::map<std::string, std::pair<double, int>, std::less<>> m_sums;
  ParsedMetrics m_parsed;
};

// Line by line over the output: no copy of it and no list of its lines is made.
ParsedMetrics parse_lkp(std::string_view output, const MetricLimits& limits) {
  MetricSink sink(limits);
  while (!output.empty()) {
    auto newline = output.find('\n');
    auto line = output.substr(0, newline);
    output.remove_prefix(newline == std::string_view::npos ? output.size() : newline + 1);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    auto name = base::trim(line.substr(0, colon));
    auto value = parse_number(base::trim(line.substr(colon + 1)));
    if (!is_metric_name(name) || !value) {
      continue;
    }
    if (auto* sum = sink.slot(name)) {
      sum->first += *value;
      ++sum->second;
    }
  }
  return std::move(sink).finish();
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

// Flattens the numeric members of one JSON object into a MetricSink as the parser meets them (SAX): a huge object
// never becomes a document in memory. Members of arrays are skipped, as are non-numbers.
class FlattenSax : public nlohmann::json_sax<nlohmann::json> {
public:
  explicit FlattenSax(MetricSink& sink) : m_sink(sink) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t value) override { return number(static_cast<double>(value)); }
  bool number_unsigned(number_unsigned_t value) override { return number(static_cast<double>(value)); }
  bool number_float(number_float_t value, const string_t&) override { return number(value); }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    if (m_arrays == 0) {
      m_prefix_sizes.push_back(m_path.size());
    }
    return true;
  }
  bool key(string_t& key) override {
    if (m_arrays == 0 && !m_prefix_sizes.empty()) {
      m_path.resize(m_prefix_sizes.back());
      m_path += m_prefix_sizes.back() > 0 ? "." + key : key;
    }
    return true;
  }
  bool end_object() override {
    if (m_arrays == 0 && !m_prefix_sizes.empty()) {
      m_path.resize(m_prefix_sizes.back());
      m_prefix_sizes.pop_back();
    }
    return true;
  }
  bool start_array(std::size_t) override {
    ++m_arrays;
    return true;
  }
  bool end_array() override {
    --m_arrays;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
  bool number(double value) {
    if (m_arrays == 0 && !m_path.empty() && std::isfinite(value)) {
      m_sink.set(m_path, value);
    }
    return true;
  }

  MetricSink& m_sink;
  std::string m_path;                      // the dotted name of the current member
  std::vector<std::size_t> m_prefix_sizes; // m_path's length at each open object
  int m_arrays = 0;                        // depth inside arrays (their members are not metrics)
};

// The last top-level object: a '{' that does not start valid JSON (log text) is skipped, and objects
// nested in a found one are not candidates. Candidates are only validated here, never built.
std::optional<std::string_view> last_object_text(std::string_view output) {
  std::optional<std::string_view> last;
  std::size_t pos = output.find('{');
  while (pos != std::string_view::npos) {
    auto end = object_end(output, pos);
    if (end != std::string_view::npos) {
      auto candidate = output.substr(pos, end - pos);
      if (nlohmann::json::accept(candidate)) {
        last = candidate;
        pos = output.find('{', end);
        continue;
      }
    }
    pos = output.find('{', pos + 1);
  }
  return last;
}

std::optional<nlohmann::json> last_object(std::string_view output) {
  auto text = last_object_text(output);
  if (!text) {
    return std::nullopt;
  }
  return nlohmann::json::parse(*text);
}

ParsedMetrics parse_json(std::string_view output, const MetricLimits& limits) {
  MetricSink sink(limits);
  if (auto text = last_object_text(output)) {
    FlattenSax sax(sink);
    nlohmann::json::sax_parse(*text, &sax);
  }
  return std::move(sink).finish();
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

ParsedMetrics parse_metrics_capped(std::string_view output, MetricFormat format, const MetricLimits& limits) {
  return format == MetricFormat::json ? parse_json(output, limits) : parse_lkp(output, limits);
}

std::map<std::string, double> parse_metrics(std::string_view output, MetricFormat format, const MetricLimits& limits) {
  return parse_metrics_capped(output, format, limits).metrics;
}

std::string dropped_metrics_note(const ParsedMetrics& parsed, const MetricLimits& limits) {
  std::string note;
  if (parsed.dropped_over_cap > 0) {
    note += "bisectd: " + std::to_string(parsed.dropped_over_cap) + " metric " +
            (parsed.dropped_over_cap == 1 ? "value" : "values") + " dropped: a run keeps at most " +
            std::to_string(limits.max_metrics) + " metrics\n";
  }
  if (parsed.dropped_long_names > 0) {
    note += "bisectd: " + std::to_string(parsed.dropped_long_names) + " metric " +
            (parsed.dropped_long_names == 1 ? "value" : "values") + " dropped: name longer than " +
            std::to_string(limits.max_name_bytes) + " bytes\n";
  }
  return note;
}

void judge_run(RunResult& run, std::string_view output, const RunSpec& spec, std::string exit_problem,
               const MetricLimits& limits) {
  auto parsed = parse_metrics_capped(output, spec.format, limits);
  run.log_note = dropped_metrics_note(parsed, limits);
  run.metrics = std::move(parsed.metrics);
  if (!exit_problem.empty()) {
    run.error = std::move(exit_problem);
  } else if (!spec.primary.empty() && !run.metrics.contains(spec.primary)) {
    run.error = missing_primary_error(output, spec);
  } else {
    run.error.clear();
  }
  run.ok = run.error.empty();
}

std::string add_collected_metrics(RunResult& run, std::map<std::string, double> collected,
                                  const MetricLimits& limits) {
  ParsedMetrics dropped;
  for (auto& [name, value] : collected) {
    if (run.metrics.contains(name)) {
      continue;
    }
    if (name.size() > limits.max_name_bytes) {
      ++dropped.dropped_long_names;
    } else if (run.metrics.size() >= limits.max_metrics) {
      ++dropped.dropped_over_cap;
    } else {
      run.metrics.emplace(name, value);
    }
  }
  auto note = dropped_metrics_note(dropped, limits);
  run.log_note += note;
  return note;
}

} // namespace bisectd::lab
