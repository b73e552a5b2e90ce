#include "vcs/repository.hpp"

#include <catch2/catch.hpp>

using bisectd::ErrorCode;
using bisectd::vcs::validate_url;

TEST_CASE("vcs::validate_url accepts the documented forms", "[vcs]") {
  for (const char* url :
       {"/srv/git/linux.git", "./repo", "relative/repo.git", "file:///srv/git/linux.git",
        "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git", "http://example.org/r.git",
        "ssh://git@example.org:2222/~user/r.git", "git://git.kernel.org/pub/scm/git/git.git",
        "git@github.com:torvalds/linux.git", "example.org:repos/r.git", "/tmp/with%20percent"}) {
    INFO(url);
    CHECK(validate_url(url).has_value());
  }
}

TEST_CASE("vcs::validate_url rejects unsafe URLs and names them", "[vcs]") {
  struct Case {
    const char* url;
    const char* why;
  };
  for (auto [url, why] :
       {Case{"a b", "space"}, Case{"x;rm -rf", "x;rm -rf"}, Case{"$(id)", "'$'"}, Case{"`id`", "'`'"},
        Case{"repo|cat", "'|'"}, Case{"", "empty"}, Case{"-uploadpack=touch", "starts with '-'"},
        Case{"ext::sh", "remote-helper"}, Case{"ftp://example.org/r.git", "unsupported scheme"},
        Case{"https://", "host"}, Case{"ssh://-oProxyCommand=x/r", "host"}, Case{"host:", "missing path"},
        Case{"line\nbreak", "\\x0a"}, Case{"-host:path", "starts with '-'"}}) {
    INFO(url);
    auto status = validate_url(url);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().code == ErrorCode::invalid_input);
    CHECK(status.error().message.find(why) != std::string::npos);
    CHECK(status.error().message.find('\n') == std::string::npos);
    if (*url != '\0' && std::string_view(url).find('\n') == std::string_view::npos) {
      CHECK(status.error().message.find(std::string("'") + url + "'") != std::string::npos);
    }
  }
}
