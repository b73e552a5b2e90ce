#include "cli/validate.hpp"

#include "base/strings.hpp"
#include "base/units.hpp"
#include "cli/exit_codes.hpp"
#include "vcs/repository.hpp"

#include <algorithm>
#include <charconv>

namespace bisectd::cli {

Status validate_name(const std::string& name, const std::string& what) {
  if (!base::is_valid_name(name)) {
    return usage_error(what + " '" + name + "': must match [a-z0-9][a-z0-9._-]* (at most 64 characters)");
  }
  return {};
}

Status validate_url(const std::string& url) {
  // One rule set for every layer: vcs decides which URLs reach libgit2.
  auto status = vcs::validate_url(url);
  if (!status) {
    return usage_error(status.error().message);
  }
  return {};
}

Status validate_notify(const std::vector<std::string>& addresses) {
  for (const auto& address : addresses) {
    if (!base::is_mail_address(address)) { // the API refuses the same entries: one check for both
      return usage_error("--notify '" + address + "': not a mail address (one line with an '@')");
    }
  }
  return {};
}

Status validate_rev(const std::string& rev, const std::string& what) {
  if (rev.empty()) {
    return usage_error(what + ": is empty");
  }
  bool has_space_or_control =
    std::any_of(rev.begin(), rev.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
  if (has_space_or_control || rev.front() == '-') {
    return usage_error(what + " '" + rev + "': not a revision (whitespace, control character or leading '-')");
  }
  return {};
}

Status validate_seconds(double seconds, const std::string& what) {
  if (!(seconds > 0)) {
    return usage_error(what + ": must be a positive number of seconds");
  }
  return {};
}

Result<double> parse_threshold(const std::string& text) {
  auto value = base::parse_percent(text);
  if (!value) {
    return usage_error("--threshold '" + text + "': " + value.error().message);
  }
  if (!(*value > 0.0 && *value < 1.0)) {
    return usage_error("--threshold '" + text + "': must be between 0% and 100%");
  }
  return *value;
}

Result<long long> parse_id(const std::string& text, const std::string& what) {
  long long id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
    return usage_error(what + " '" + text + "': must be a positive integer");
  }
  return id;
}

Result<std::int64_t> parse_duration_seconds(const std::string& text, const std::string& what) {
  auto duration = base::parse_duration(text);
  if (!duration || duration->count() < 1000) {
    return usage_error(what + " '" + text + "': must be a positive duration such as 60s, 5m or 1h");
  }
  return std::chrono::duration_cast<std::chrono::seconds>(*duration).count();
}

} // namespace bisectd::cli
