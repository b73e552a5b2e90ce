#include "cli/detect_input.hpp"

#include "base/strings.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

namespace bisectd::cli {
namespace {

using nlohmann::json;

std::unexpected<Error> bad_input(const std::string& where, const std::string& what) {
  return make_error(ErrorCode::generic, where + ": " + what);
}

Result<double> json_number(const json& value, const std::string& name, const std::string& path) {
  if (!value.is_number()) {
    return bad_input(name, path + ": expected a number, got " + std::string(value.type_name()));
  }
  return value.get<double>();
}

Result<std::vector<double>> json_samples(const json& value, const std::string& name, const std::string& path) {
  if (!value.is_array()) {
    return bad_input(name, path + ": expected an array of numbers, got " + std::string(value.type_name()));
  }
  std::vector<double> samples;
  for (std::size_t i = 0; i < value.size(); ++i) {
    BISECTD_TRY_ASSIGN(double sample, json_number(value[i], name, path + "[" + std::to_string(i) + "]"));
    samples.push_back(sample);
  }
  return samples;
}

Result<std::string> json_id(const json& commit, const std::string& name, const std::string& path) {
  if (!commit.contains("id")) {
    return bad_input(name, path + ".id: missing");
  }
  const json& id = commit["id"];
  if (id.is_string() && !id.get<std::string>().empty()) {
    return id.get<std::string>();
  }
  if (id.is_number_integer()) { // {"id": 17}: a build number or position
    return id.dump();
  }
  return bad_input(name, path + ".id: expected a non-empty string");
}

// Optional lab fields of commits[i]: "machine"/"boot" (one string for every sample) or "machines"/"boots"
// (one string per sample).
Status json_origin_field(const json& commit, const std::string& name, const std::string& path, const char* one,
                         const char* many, std::vector<std::string>& out, std::size_t samples) {
  if (commit.contains(one) && commit.contains(many)) {
    return bad_input(name, path + ": give either \"" + one + "\" or \"" + many + "\", not both");
  }
  if (commit.contains(one)) {
    if (!commit[one].is_string()) {
      return bad_input(name, path + "." + one + ": expected a string");
    }
    out.assign(samples, commit[one].get<std::string>());
    return {};
  }
  if (!commit.contains(many)) {
    return {};
  }
  const json& list = commit[many];
  if (!list.is_array() || list.size() != samples) {
    return bad_input(name, path + "." + many + ": expected an array of " + std::to_string(samples) +
                             " strings (one per sample)");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return bad_input(name, path + "." + many + "[" + std::to_string(i) + "]: expected a string");
    }
    out.push_back(list[i].get<std::string>());
  }
  return {};
}

Result<std::vector<bisect::SampleOrigin>> json_origins(const json& commit, const std::string& name,
                                                       const std::string& path, std::size_t samples) {
  std::vector<std::string> machines, boots;
  BISECTD_TRY(json_origin_field(commit, name, path, "machine", "machines", machines, samples));
  BISECTD_TRY(json_origin_field(commit, name, path, "boot", "boots", boots, samples));
  std::vector<bisect::SampleOrigin> out;
  if (machines.empty() && boots.empty()) {
    return out;
  }
  for (std::size_t i = 0; i < samples; ++i) {
    out.push_back({machines.empty() ? std::string() : machines[i], boots.empty() ? std::string() : boots[i]});
  }
  return out;
}

Result<DetectInput> json_commits(const json& commits, const std::string& name) {
  if (!commits.is_array()) {
    return bad_input(name, "commits: expected an array, got " + std::string(commits.type_name()));
  }
  DetectInput input;
  input.has_ids = true;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < commits.size(); ++i) {
    std::string path = "commits[" + std::to_string(i) + "]";
    if (!commits[i].is_object()) {
      return bad_input(name, path + ": expected an object with \"id\" and \"samples\"");
    }
    BISECTD_TRY_ASSIGN(std::string id, json_id(commits[i], name, path));
    if (auto [it, fresh] = seen.emplace(id, i); !fresh) {
      return bad_input(name, path + ".id: '" + id + "' repeats commits[" + std::to_string(it->second) + "]");
    }
    if (!commits[i].contains("samples")) {
      return bad_input(name, path + ".samples: missing");
    }
    BISECTD_TRY_ASSIGN(auto samples, json_samples(commits[i]["samples"], name, path + ".samples"));
    BISECTD_TRY_ASSIGN(auto origins, json_origins(commits[i], name, path, samples.size()));
    input.has_lab = input.has_lab || !origins.empty();
    input.points.push_back({id, std::move(samples), std::move(origins)});
  }
  return input;
}

} // namespace

std::optional<double> parse_number(std::string_view text) {
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
  }
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

Result<DetectInput> parse_detect_json(std::string_view text, const std::string& name) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("] ");
    return bad_input(name, "invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
  }
  bool has_values = root.is_object() && root.contains("values");
  bool has_commits = root.is_object() && root.contains("commits");
  if (has_values == has_commits) {
    return bad_input(name, "expected an object with either \"values\" or \"commits\"");
  }
  if (has_commits) {
    BISECTD_TRY_ASSIGN(DetectInput input, json_commits(root["commits"], name));
    return input;
  }
  BISECTD_TRY_ASSIGN(auto values, json_samples(root["values"], name, "values"));
  DetectInput input;
  for (double value : values) {
    input.points.push_back({"", {value}, {}});
  }
  return input;
}

namespace {

// The fields of one CSV line, trimmed, with surrounding double quotes removed.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  for (const auto& raw : base::split(line, ',')) {
    std::string field(base::trim(raw));
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
      field = field.substr(1, field.size() - 2);
    }
    fields.push_back(field);
  }
  return fields;
}

// A header names its columns: every field starts with a letter ("commit,value", "ops_per_sec").
bool looks_like_header(const std::vector<std::string>& fields) {
  return std::all_of(fields.begin(), fields.end(), [](const std::string& field) {
    return !field.empty() && std::isalpha(static_cast<unsigned char>(field.front())) != 0;
  });
}

class CsvReader {
public:
  explicit CsvReader(const std::string& name) : m_name(name) {}

  Status add_line(std::size_t number, std::string_view line) {
    std::string where = m_name + ":" + std::to_string(number);
    auto fields = csv_fields(line);
    if (fields.size() > 4) {
      return bad_input(where, "expected 'value', 'commit,value', 'commit,value,machine' or "
                              "'commit,value,machine,boot', found " +
                                std::to_string(fields.size()) + " fields");
    }
    const std::size_t value_field = fields.size() == 1 ? 0 : 1;
    auto value = parse_number(fields[value_field]);
    if (m_shape == 0) { // the first data line fixes the shape; it may be a header
      m_shape = fields.size();
      m_shape_line = number;
      if (!value && looks_like_header(fields)) {
        return {};
      }
    }
    if (fields.size() != m_shape) {
      static const char* shapes[] = {"", "1 field (value)", "2 fields (commit,value)",
                                     "3 fields (commit,value,machine)", "4 fields (commit,value,machine,boot)"};
      return bad_input(where, "expected " + std::string(shapes[m_shape]) + " like line " +
                                std::to_string(m_shape_line) + ", found " + std::to_string(fields.size()));
    }
    if (!value) {
      return bad_input(where, "'" + fields[value_field] + "' is not a number");
    }
    bisect::SampleOrigin origin{m_shape >= 3 ? fields[2] : std::string(), m_shape >= 4 ? fields[3] : std::string()};
    return add_value(where, m_shape >= 2 ? fields.front() : std::string(), *value, std::move(origin));
  }

  Result<DetectInput> finish() {
    if (m_input.points.empty()) {
      return bad_input(m_name, "no values");
    }
    m_input.has_ids = m_shape >= 2;
    m_input.has_lab = m_shape >= 3;
    return std::move(m_input);
  }

private:
  Status add_value(const std::string& where, const std::string& id, double value, bisect::SampleOrigin origin) {
    if (m_shape == 1) {
      m_input.points.push_back({"", {value}, {}});
      return {};
    }
    if (id.empty()) {
      return bad_input(where, "empty commit id");
    }
    auto [it, fresh] = m_index.emplace(id, m_input.points.size());
    if (fresh) {
      m_input.points.push_back({id, {}, {}});
    }
    m_input.points[it->second].samples.push_back(value);
    if (m_shape >= 3) {
      m_input.points[it->second].origins.push_back(std::move(origin));
    }
    return {};
  }

  std::string m_name;
  std::size_t m_shape = 0;
  std::size_t m_shape_line = 0;
  std::map<std::string, std::size_t> m_index;
  DetectInput m_input;
};

} // namespace

Result<DetectInput> parse_detect_csv(std::string_view text, const std::string& name) {
  CsvReader reader(name);
  auto lines = base::split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = base::trim(lines[i]);
    if (line.empty() || line.front() == '#') {
      continue;
    }
    BISECTD_TRY(reader.add_line(i + 1, line));
  }
  return reader.finish();
}

Result<DetectInput> parse_detect_input(std::string_view text, const std::string& name) {
  std::string_view content = base::trim(text);
  if (content.empty()) {
    return bad_input(name, "is empty");
  }
  if (content.front() == '{' || content.front() == '[') {
    return parse_detect_json(text, name);
  }
  return parse_detect_csv(text, name);
}

} // namespace bisectd::cli
