#include "vcs/commit_message.hpp"

#include "vcs/git_handle.hpp"

namespace bisectd::vcs {

namespace {

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// libgit2 ports git's trailer rules (last paragraph, "---" patch cut, ≥ 25 % trailer lines, continuation lines).
std::vector<Trailer> parse_trailers(const std::string& message) {
  std::vector<Trailer> trailers;
  // Without an initialised libgit2 the call fails, and every message would seem to have no trailers.
  detail::ensure_libgit2();
  git_message_trailer_array array{};
  if (git_message_trailers(&array, message.c_str()) != 0) {
    return trailers; // unparsable trailer block: the message simply has none
  }
  trailers.reserve(array.count);
  for (std::size_t i = 0; i < array.count; ++i) {
    trailers.push_back(Trailer{array.trailers[i].key, array.trailers[i].value});
  }
  git_message_trailer_array_free(&array);
  return trailers;
}

} // namespace

ParsedMessage parse_message(std::string_view message) {
  ParsedMessage parsed;
  while (!message.empty() && message.front() == '\n') {
    message.remove_prefix(1);
  }
  auto newline = message.find('\n');
  parsed.subject = std::string(trim_right(message.substr(0, newline)));
  if (newline != std::string_view::npos) {
    std::string_view rest = message.substr(newline + 1);
    while (!rest.empty()) {
      auto line_end = rest.find('\n');
      if (!trim_right(rest.substr(0, line_end)).empty()) {
        break;
      }
      rest.remove_prefix(line_end == std::string_view::npos ? rest.size() : line_end + 1);
    }
    parsed.body = std::string(trim_right(rest));
  }
  if (message.find(':') != std::string_view::npos) {
    parsed.trailers = parse_trailers(std::string(message));
  }
  return parsed;
}

} // namespace bisectd::vcs
