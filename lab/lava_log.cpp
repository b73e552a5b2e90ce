// Backend `lava`: reading LAVA's job log (YAML records, one per line) and its results (see lava_job.hpp).

#include "base/strings.hpp"
#include "lab/lava_job.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <regex>

namespace bisectd::lab {

using json = nlohmann::json;

Result<std::string> parse_yaml_double_quoted(const std::string& text, std::size_t& pos) {
  if (pos >= text.size() || text[pos] != '"') {
    return make_error(ErrorCode::infra, "expected a double-quoted scalar");
  }
  std::string out;
  // Exactly `digits` hex digits naming a Unicode scalar value; anything else ("\xZZ", "\u+12f", a surrogate, a
  // \U beyond U+10FFFF) is a bad escape, never an exception or invalid UTF-8 out of a log a lab wrote.
  auto hex = [&](std::size_t at, int digits) -> std::optional<std::uint32_t> {
    auto count = static_cast<std::size_t>(digits);
    if (at + count > text.size()) {
      return std::nullopt;
    }
    std::uint32_t value = 0;
    const char* first = text.data() + at;
    auto [end, ec] = std::from_chars(first, first + count, value, 16);
    if (ec != std::errc() || end != first + count || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
      return std::nullopt;
    }
    return value;
  };
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      pos = i + 1;
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= text.size()) {
      break;
    }
    static const std::map<char, std::string> k_simple{{'0', std::string(1, '\0')},
                                                      {'a', "\a"},
                                                      {'b', "\b"},
                                                      {'t', "\t"},
                                                      {'\t', "\t"},
                                                      {'n', "\n"},
                                                      {'v', "\v"},
                                                      {'f', "\f"},
                                                      {'r', "\r"},
                                                      {'e', "\x1b"},
                                                      {' ', " "},
                                                      {'"', "\""},
                                                      {'/', "/"},
                                                      {'\\', "\\"},
                                                      {'N', "\xc2\x85"},
                                                      {'_', "\xc2\xa0"},
                                                      {'L', "\xe2\x80\xa8"},
                                                      {'P', "\xe2\x80\xa9"}};
    if (auto simple = k_simple.find(text[i]); simple != k_simple.end()) {
      out += simple->second;
      continue;
    }
    int digits = text[i] == 'x' ? 2 : text[i] == 'u' ? 4 : text[i] == 'U' ? 8 : 0;
    auto cp = digits > 0 ? hex(i + 1, digits) : std::nullopt;
    if (!cp) {
      return make_error(ErrorCode::infra, "bad escape in a double-quoted scalar");
    }
    base::append_utf8(out, *cp);
    i += static_cast<std::size_t>(digits);
  }
  return make_error(ErrorCode::infra, "unterminated double-quoted scalar");
}

namespace {

// One log record: its lvl and, when a string, its msg.
struct LogRecord {
  std::string lvl;
  std::string msg;
  bool msg_is_string = false;
};

// Reads `"key": "value"` pairs of one `- {...}` line; values that are not strings (nested maps) are skipped.
std::optional<LogRecord> parse_log_line(const std::string& line) {
  auto start = line.find('{');
  if (line.rfind("- ", 0) != 0 || start == std::string::npos) {
    return std::nullopt;
  }
  LogRecord record;
  std::size_t pos = start + 1;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == ',')) {
      ++pos;
    }
    if (pos >= line.size() || line[pos] != '"') {
      break;
    }
    auto key = parse_yaml_double_quoted(line, pos);
    if (!key || pos + 1 >= line.size() || line[pos] != ':') {
      break;
    }
    pos += 2;
    if (pos < line.size() && line[pos] == '"') {
      auto value = parse_yaml_double_quoted(line, pos);
      if (!value) {
        break;
      }
      if (*key == "lvl") {
        record.lvl = *value;
      } else if (*key == "msg") {
        record.msg = *value;
        record.msg_is_string = true;
      }
    } else {
      break; // a nested value: nothing after it that we need (dt and lvl come first)
    }
  }
  if (record.lvl.empty()) {
    return std::nullopt;
  }
  return record;
}

template <class Each> void each_record(const std::string& log_yaml, Each each) {
  std::size_t pos = 0;
  while (pos < log_yaml.size()) {
    auto end = log_yaml.find('\n', pos);
    auto line = log_yaml.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (auto record = parse_log_line(line)) {
      each(*record);
    }
    if (end == std::string::npos) {
      break;
    }
    pos = end + 1;
  }
}

} // namespace

std::string lava_console(const std::string& log_yaml) {
  std::string out;
  each_record(log_yaml, [&](const LogRecord& record) {
    if ((record.lvl == "target" || record.lvl == "feedback") && record.msg_is_string) {
      out += record.msg;
      out += '\n';
    }
  });
  return out;
}

std::string lava_log_text(const std::string& log_yaml) {
  std::string out;
  each_record(log_yaml, [&](const LogRecord& record) {
    out += record.lvl + ": " + (record.msg_is_string ? record.msg : "{...}") + "\n";
  });
  return out;
}

std::string lava_error_type(const std::string& tests_json) {
  auto doc = json::parse(tests_json, nullptr, false);
  const json* list = &doc;
  if (doc.is_object() && doc.contains("results")) {
    list = &doc["results"];
  }
  if (!list->is_array()) {
    return "";
  }
  static const std::regex k_error_type(R"(error_type:\s*'?([A-Za-z]+))");
  for (const auto& test : *list) {
    // Types checked before reading: json's value() throws when "name" is there but not a string.
    if (!test.is_object() || !test.contains("name") || test["name"] != "job" || !test.contains("metadata") ||
        !test["metadata"].is_string()) {
      continue;
    }
    std::smatch match;
    auto metadata = test["metadata"].get<std::string>();
    if (std::regex_search(metadata, match, k_error_type)) {
      return match[1];
    }
  }
  return "";
}

} // namespace bisectd::lab
