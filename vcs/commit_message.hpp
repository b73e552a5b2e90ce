#pragma once
// Splits a raw commit message into subject, body and trailers (no repository needed).

#include "vcs/repository.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace bisectd::vcs {

struct ParsedMessage {
  std::string subject;           // the first line
  std::string body;              // after the subject line: leading blank lines and trailing whitespace dropped
  std::vector<Trailer> trailers; // the trailer block of the last paragraph (git interpret-trailers rules)
};

ParsedMessage parse_message(std::string_view message);

} // namespace bisectd::vcs
