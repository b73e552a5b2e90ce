#pragma once
// Pages of list answers: no GET answers with an unbounded list. A client asks `?limit=N&after=CURSOR` and gets
// `"next": CURSOR` (null on the last page); the cursor is the key of the page's last item (an id or a name), so a
// page stays right when items are added or removed meanwhile.

#include "base/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace bisectd::daemon::api {

struct PageBounds {
  std::size_t default_limit = 100;
  std::size_t max_limit = 500; // a larger ?limit= is cut to this
};

struct PageRequest {
  std::size_t limit = 0;
  std::string after; // the cursor: empty for the first page
};

// Reads ?limit= (a whole number from 1; above bounds.max_limit it is max_limit) and ?after=. Errors name the field.
Result<PageRequest> parse_page(const std::map<std::string, std::string>& query, const PageBounds& bounds);

// ?after= as a sample or bisection id (0 when absent). Errors name the field.
Result<std::int64_t> page_after_id(const PageRequest& page);

// The page of `items` (already in answer order) that follows the cursor: the items for which `follows(item)`
// holds from the first one on (all of them on the first page), at most page.limit of them. `next` is `key(last)`
// when more items follow, else null. `to_json` makes each answer item.
template <class Item, class Follows, class Key, class ToJson>
nlohmann::json page_of(const std::vector<Item>& items, const PageRequest& page, Follows follows, Key key,
                       ToJson to_json, nlohmann::json& next) {
  auto first = page.after.empty() ? items.begin() : std::find_if(items.begin(), items.end(), follows);
  auto count = std::min<std::size_t>(page.limit, static_cast<std::size_t>(items.end() - first));
  nlohmann::json out = nlohmann::json::array();
  for (auto it = first; it != first + static_cast<std::ptrdiff_t>(count); ++it) {
    out.push_back(to_json(*it));
  }
  bool more = first + static_cast<std::ptrdiff_t>(count) != items.end();
  next = more ? nlohmann::json(key(*(first + static_cast<std::ptrdiff_t>(count) - 1))) : nlohmann::json(nullptr);
  return out;
}

} // namespace bisectd::daemon::api
