#pragma once
// Text checks shared by the unit tests.

#include <string_view>

namespace bisectd::testing {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

} // namespace bisectd::testing
