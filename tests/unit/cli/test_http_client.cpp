#include "cli/http_client.hpp"
#include "cli/interrupt.hpp"
#include "cli_test_support.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace bisectd;
using namespace bisectd::cli;
using bisectd::cli::test::FakeServer;

namespace bisectd::cli::test {
FakeServer& shared_server() {
  static FakeServer server;
  return server;
}
} // namespace bisectd::cli::test

using bisectd::cli::test::shared_server;

TEST_CASE("cli::HttpClient GETs JSON with its token (logs need it; the daemon keeps slots for it)", "[cli][http]") {
  FakeServer& server = shared_server();
  HttpClient client(server.url() + "/", std::string("test-token"));
  auto reply = client.get_json("/api/v1/status?x=1");
  REQUIRE(reply);
  CHECK((*reply)["version"] == "0.1.0");
  auto last = server.requests().back();
  CHECK(last["method"] == "GET");
  CHECK(last["path"] == "/api/v1/status");
  CHECK(last["query"] == "x=1");
  CHECK(last["authorization"] == "Bearer test-token");

  HttpClient anonymous(server.url(), std::nullopt);
  REQUIRE(anonymous.get_json("/api/v1/status"));
  CHECK(server.requests().back()["authorization"].is_null());
}

TEST_CASE("cli::HttpClient POSTs and DELETEs with the bearer token", "[cli][http]") {
  FakeServer& server = shared_server();
  HttpClient client(server.url(), std::string("test-token"));
  auto reply = client.post_json("/api/v1/bisections", {{"tree", "demo"}});
  REQUIRE(reply);
  CHECK((*reply)["id"] == 7);
  auto last = server.requests().back();
  CHECK(last["authorization"] == "Bearer test-token");
  CHECK(last["content_type"] == "application/json");
  CHECK(last["body"] == nlohmann::json{{"tree", "demo"}});

  auto removed = client.delete_json("/api/v1/trees/demo");
  REQUIRE(removed);
  CHECK((*removed)["removed"] == "demo");
  CHECK(server.requests().back()["method"] == "DELETE");
}

TEST_CASE("cli::HttpClient turns error replies into the server's message", "[cli][http]") {
  FakeServer& server = shared_server();
  HttpClient client(server.url(), std::nullopt);
  auto missing = client.get_json("/api/v1/bisections/99");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::not_found);
  CHECK(missing.error().message == "bisection 99: not found");

  auto unauthorized = client.post_json("/api/v1/bisections", nlohmann::json::object());
  REQUIRE_FALSE(unauthorized);
  CHECK(unauthorized.error().code == ErrorCode::generic);
  CHECK(unauthorized.error().message ==
        "missing or wrong token (no token given: use --token-file or BISECTD_TOKEN_FILE)");

  HttpClient writer(server.url(), std::string("test-token"));
  auto conflict = writer.post_json("/api/v1/trees/dup", nlohmann::json::object());
  REQUIRE_FALSE(conflict);
  CHECK(conflict.error().code == ErrorCode::conflict);

  auto not_json = client.get_json("/not-json");
  REQUIRE_FALSE(not_json);
  CHECK(not_json.error().message == "GET /not-json: the daemon's reply is not JSON");
}

TEST_CASE("cli::HttpClient reports unreachable daemons and timeouts", "[cli][http]") {
  HttpClient nobody("http://127.0.0.1:1", std::nullopt);
  auto refused = nobody.get_json("/api/v1/status");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::unreachable);
  CHECK(refused.error().message.rfind("cannot reach bisectd at http://127.0.0.1:1: ", 0) == 0);

  HttpClient impatient(shared_server().url(), std::nullopt, HttpOptions{std::chrono::milliseconds(300)});
  auto start = std::chrono::steady_clock::now();
  auto slow = impatient.get_json("/slow");
  REQUIRE_FALSE(slow);
  CHECK(slow.error().code == ErrorCode::timeout);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("cli::HttpClient aborts a transfer on interrupt", "[cli][http]") {
  HttpClient client(shared_server().url(), std::nullopt);
  reset_interrupt();
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    request_interrupt();
  });
  auto slow = client.get_json("/slow");
  interrupter.join();
  reset_interrupt();
  REQUIRE_FALSE(slow);
  CHECK(slow.error().code == ErrorCode::cancelled);
}

TEST_CASE("cli url helpers", "[cli]") {
  CHECK(url_encode("a b/c?d&e=f~_.-") == "a%20b%2Fc%3Fd%26e%3Df~_.-");
  CHECK(query_string({{"tree", "demo"}, {"state", ""}, {"job", "a b"}}) == "?tree=demo&job=a%20b");
  CHECK(query_string({{"tree", ""}}).empty());
  CHECK(http_error(HttpResponse{500, "<html>oops</html>"}, "GET /x").message ==
        "HTTP 500 from GET /x: <html>oops</html>");
}

TEST_CASE("cli::HttpClient::get_all_pages follows the API's next cursor to the last page", "[cli][http]") {
  FakeServer& server = shared_server();
  HttpClient client(server.url(), std::nullopt);
  auto all = client.get_all_pages("/api/v1/paged?tree=demo", "items");
  REQUIRE(all);
  CHECK((*all)["items"] == nlohmann::json{1, 2, 3});
  CHECK((*all)["next"].is_null());
  auto last = server.requests().back();
  CHECK(last["path"] == "/api/v1/paged");
  CHECK(last["query"] == "tree=demo&after=2");
}
