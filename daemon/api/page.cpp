#include "daemon/api/page.hpp"

#include <charconv>

namespace bisectd::daemon::api {

namespace {

// A whole number of at most 18 digits ("0" included), nullopt for anything else.
std::optional<std::int64_t> whole_number(const std::string& text) {
  std::int64_t value = 0;
  if (text.empty() || text.size() > 18) {
    return std::nullopt;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

} // namespace

Result<PageRequest> parse_page(const std::map<std::string, std::string>& query, const PageBounds& bounds) {
  PageRequest page{.limit = bounds.default_limit, .after = ""};
  if (auto limit = query.find("limit"); limit != query.end()) {
    auto value = whole_number(limit->second);
    if (!value || *value == 0) {
      return make_error(ErrorCode::invalid_input,
                        "limit: '" + limit->second.substr(0, 40) + "' is not a whole number of items from 1");
    }
    page.limit = std::min(static_cast<std::size_t>(*value), bounds.max_limit);
  }
  if (auto after = query.find("after"); after != query.end()) {
    page.after = after->second;
  }
  return page;
}

Result<std::int64_t> page_after_id(const PageRequest& page) {
  if (page.after.empty()) {
    return 0;
  }
  auto value = whole_number(page.after);
  if (!value) {
    return make_error(ErrorCode::invalid_input,
                      "after: '" + page.after.substr(0, 40) + "' is not an id (the \"next\" of the previous page)");
  }
  return *value;
}

} // namespace bisectd::daemon::api
