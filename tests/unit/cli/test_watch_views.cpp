// What `bisectctl tree show` and `bisectctl detections` print of the watcher's state: each branch's newest and last
// measured head and why it is not watched; a baseline as one head, a rewritten comparison marked.
#include "cli/cmd_manage.hpp"

#include <catch2/catch.hpp>

using bisectd::cli::render_detections;
using bisectd::cli::render_tree;

TEST_CASE("bisectctl tree show: each branch's heads, its watch error, the next poll", "[cli]") {
  auto tree = nlohmann::json::parse(R"({"name": "next", "url": "/src/next", "branches": ["master", "gone"],
    "job": "j", "poll_interval_s": 60, "heads": {"master": null, "gone": null}, "next_poll": "2026-12-07T16:00:00Z",
    "branch_states": {
      "master": {"head": "1111111111111111111111111111111111111111", "measured": "2222222222222222222222222222222222222222",
                 "error": null, "error_since": null},
      "gone": {"head": null, "measured": null, "error": "deleted upstream: not found in /src/next",
               "error_since": "2026-12-07T15:00:00Z"}}})");
  auto text = render_tree(tree);
  CHECK(text.find("  master: head 1111111111, last measured 2222222222\n") != std::string::npos);
  CHECK(text.find("  gone: head -, last measured -, not watched since 2026-12-07T15:00:00Z: deleted upstream") !=
        std::string::npos);
  CHECK(text.find("poll:     1m\nnext:     2026-12-07T16:00:00Z\n") != std::string::npos);
}

TEST_CASE("bisectctl detections: a baseline is one head, a rewritten comparison is marked", "[cli]") {
  auto reply = nlohmann::json::parse(R"({"detections": [
    {"id": 2, "tree": "next", "branch": "master", "metric": "ops", "good": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "bad": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "rewritten": true, "decision": "below the threshold -1.0%"},
    {"id": 1, "tree": "next", "branch": "master", "metric": "ops", "good": null,
     "bad": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "rewritten": false, "decision": "baseline"}]})");
  auto text = render_detections(reply, 0);
  CHECK(text.find("aaaaaaaaaa..bbbbbbbbbb (rewritten)") != std::string::npos);
  CHECK(text.find(" aaaaaaaaaa ") != std::string::npos);
  CHECK(text.find("-..") == std::string::npos);
}
