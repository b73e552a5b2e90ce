// Pages of the API's list answers (daemon/api/page.hpp): bounded whatever a client asks.
#include "daemon/api/page.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using daemon::api::PageBounds;
using daemon::api::PageRequest;
using Query = std::map<std::string, std::string>;

TEST_CASE("api::parse_page: the default page, a smaller one, and a larger one cut to the bound", "[daemon][api]") {
  PageBounds bounds{.default_limit = 20, .max_limit = 100};
  auto plain = daemon::api::parse_page({}, bounds);
  REQUIRE(plain);
  CHECK(plain->limit == 20);
  CHECK(plain->after.empty());
  CHECK(daemon::api::parse_page(Query{{"limit", "5"}, {"after", "41"}}, bounds)->limit == 5);
  CHECK(daemon::api::parse_page(Query{{"limit", "5"}, {"after", "41"}}, bounds)->after == "41");
  CHECK(daemon::api::parse_page(Query{{"limit", "1000000"}}, bounds)->limit == 100);
  CHECK(daemon::api::parse_page(Query{{"limit", "99999999999999999999999"}}, bounds)
          .error()
          .message.starts_with("limit: "));
}

TEST_CASE("api::parse_page: a limit that is not a whole number from 1 is an error naming the field", "[daemon][api]") {
  for (const auto* bad : {"0", "-1", "abc", "", "1.5", "10x"}) {
    auto page = daemon::api::parse_page(Query{{"limit", bad}}, {});
    REQUIRE_FALSE(page);
    CHECK(page.error().code == ErrorCode::invalid_input);
    CHECK(page.error().message == std::string("limit: '") + bad + "' is not a whole number of items from 1");
  }
}

TEST_CASE("api::page_after_id: an id cursor, 0 for the first page, an error for anything else", "[daemon][api]") {
  CHECK(daemon::api::page_after_id(PageRequest{.limit = 1, .after = ""}).value() == 0);
  CHECK(daemon::api::page_after_id(PageRequest{.limit = 1, .after = "17"}).value() == 17);
  auto bad = daemon::api::page_after_id(PageRequest{.limit = 1, .after = "x17"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.starts_with("after: 'x17' is not an id"));
}

TEST_CASE("api::page_of: pages follow the cursor to the end, each within the limit", "[daemon][api]") {
  std::vector<int> ids{9, 7, 5, 3, 1}; // newest first, as the bisections are listed
  auto follows = [](const std::string& after) { return [after](int id) { return id < std::stoi(after); }; };
  auto key = [](int id) { return std::to_string(id); };
  auto to_json = [](int id) { return nlohmann::json(id); };
  nlohmann::json next;
  auto first = daemon::api::page_of(ids, PageRequest{.limit = 2, .after = ""}, follows("0"), key, to_json, next);
  CHECK(first == nlohmann::json{9, 7});
  CHECK(next == "7");
  auto second = daemon::api::page_of(ids, PageRequest{.limit = 2, .after = "7"}, follows("7"), key, to_json, next);
  CHECK(second == nlohmann::json{5, 3});
  CHECK(next == "3");
  auto last = daemon::api::page_of(ids, PageRequest{.limit = 2, .after = "3"}, follows("3"), key, to_json, next);
  CHECK(last == nlohmann::json{1});
  CHECK(next.is_null());
  // A cursor whose item is gone meanwhile still lands right: the items after it in the order.
  auto gone = daemon::api::page_of(ids, PageRequest{.limit = 2, .after = "6"}, follows("6"), key, to_json, next);
  CHECK(gone == nlohmann::json{5, 3});
  auto past = daemon::api::page_of(ids, PageRequest{.limit = 2, .after = "0"}, follows("0"), key, to_json, next);
  CHECK(past.empty());
  CHECK(next.is_null());
}
