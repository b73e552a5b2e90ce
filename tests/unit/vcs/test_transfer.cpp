// Network clones and fetches through a bounded `git` child (vcs/transfer.hpp): the command, the outcome, and a
// remote that accepts connections and never answers.
#include "git_fixture.hpp"
#include "vcs/repository.hpp"
#include "vcs/transfer.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

using namespace std::chrono_literals;
using bisectd::ErrorCode;
using bisectd::base::ExitStatus;
using bisectd::test::GitFixture;
using bisectd::vcs::Repository;
using bisectd::vcs::TransferLimits;

namespace {

bool has(const std::vector<std::string>& argv, const std::string& item) {
  return std::find(argv.begin(), argv.end(), item) != argv.end();
}

// A TCP listener on 127.0.0.1 that never accepts: the kernel completes the handshakes, nobody answers.
class SilentListener {
public:
  SilentListener() {
    m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    REQUIRE(::bind(m_fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
    REQUIRE(::listen(m_fd, 16) == 0);
    REQUIRE(::getsockname(m_fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    m_port = ntohs(address.sin_port);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  ~SilentListener() { ::close(m_fd); }
  [[nodiscard]] std::string url() const { return "git://127.0.0.1:" + std::to_string(m_port) + "/tree.git"; }

private:
  int m_fd = -1;
  int m_port = 0;
};

} // namespace

TEST_CASE("vcs::is_network_url: other hosts, not local paths", "[vcs]") {
  for (const char* url : {"https://git.kernel.org/r.git", "http://h/r", "ssh://git@h:22/r", "git://h/r.git",
                          "ssh+git://h/r", "git@github.com:torvalds/linux.git", "host:path/r.git"}) {
    INFO(url);
    CHECK(bisectd::vcs::is_network_url(url));
  }
  for (const char* url : {"/srv/git/linux", "./repo", "relative/r.git", "file:///srv/r.git", "dir/with:colon"}) {
    INFO(url);
    CHECK_FALSE(bisectd::vcs::is_network_url(url));
  }
}

TEST_CASE("vcs::transfer_command: no prompts, no gc, bounds derived from the timeout", "[vcs]") {
  std::atomic<bool> cancel{false};
  auto command = bisectd::vcs::transfer_command({"fetch", "origin"}, TransferLimits{3s, &cancel});
  CHECK(command.argv.front() == "git");
  CHECK(command.argv[command.argv.size() - 2] == "fetch");
  CHECK(has(command.argv, "gc.auto=0"));
  CHECK(has(command.argv, "http.lowSpeedLimit=1024"));
  CHECK(has(command.argv, "http.lowSpeedTime=3"));
  CHECK(command.env.at("GIT_TERMINAL_PROMPT") == "0");
  CHECK(command.env.at("GIT_SSH_COMMAND") ==
        "ssh -o BatchMode=yes -o ConnectTimeout=3 -o ServerAliveInterval=1 -o ServerAliveCountMax=4");
  CHECK(command.timeout == 3s);
  CHECK(command.cancel == &cancel);

  auto long_one = bisectd::vcs::transfer_command({"fetch"}, TransferLimits{600s, nullptr});
  CHECK(has(long_one.argv, "http.lowSpeedTime=60"));
  CHECK(long_one.env.at("GIT_SSH_COMMAND").find("ConnectTimeout=30 -o ServerAliveInterval=15") != std::string::npos);
  CHECK(long_one.timeout == 600s);
}

TEST_CASE("vcs::transfer_outcome: timeout, git's last line escaped and cut, success", "[vcs]") {
  TransferLimits limits{7s, nullptr};
  ExitStatus timed_out;
  timed_out.timed_out = true;
  auto late = bisectd::vcs::transfer_outcome(timed_out, limits, "fetch git://h/r");
  REQUIRE_FALSE(late.has_value());
  CHECK(late.error().code == ErrorCode::timeout);
  CHECK(late.error().message == "fetch git://h/r: timed out after 7s");

  ExitStatus failed;
  failed.code = 128;
  failed.err = "remote: Counting objects: 10%\rremote: \x1b[31mevil\x1b[0m\nfatal: " + std::string(500, 'x') + "\n\n";
  auto refused = bisectd::vcs::transfer_outcome(failed, limits, "clone git://h/r");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::unreachable);
  CHECK(refused.error().message.starts_with("clone git://h/r: git exit 128: fatal: xxx"));
  CHECK(refused.error().message.ends_with("x..."));
  CHECK(refused.error().message.size() < 400);

  failed.err = "fatal: \x1b]0;title\x07 bad\n";
  auto escaped = bisectd::vcs::transfer_outcome(failed, limits, "fetch u");
  CHECK(escaped.error().message == "fetch u: git exit 128: fatal: \\x1b]0;title\\x07 bad");

  ExitStatus ok;
  ok.code = 0;
  CHECK(bisectd::vcs::transfer_outcome(ok, limits, "fetch u").has_value());
}

TEST_CASE("vcs: a remote that accepts and never answers is given up on after the timeout", "[vcs]") {
  GitFixture fixture;
  fixture.commit("first", {{"a.txt", "1\n"}});
  SilentListener silent;
  auto mirror_dir = fixture.dir() / "mirror.git";

  SECTION("clone: fails naming the URL and the timeout, leaves no mirror") {
    auto started = std::chrono::steady_clock::now();
    auto repo = Repository::mirror(silent.url(), mirror_dir, TransferLimits{2s, nullptr});
    auto took = std::chrono::steady_clock::now() - started;
    REQUIRE_FALSE(repo.has_value());
    CHECK(repo.error().code == ErrorCode::timeout);
    CHECK_THAT(repo.error().message, Catch::Contains("clone " + silent.url() + ": timed out after 2s"));
    CHECK(took < 10s);
    CHECK_FALSE(std::filesystem::exists(mirror_dir));
  }
  SECTION("fetch of an existing mirror whose origin went silent: fails, the mirror stays readable") {
    auto first = Repository::mirror(fixture.origin().string(), mirror_dir);
    REQUIRE(first.has_value());
    auto head = first->resolve("master").value();
    fixture.git({"remote", "set-url", "origin", silent.url()}, mirror_dir);
    auto repo = Repository::open(mirror_dir).value();
    auto started = std::chrono::steady_clock::now();
    auto fetched = repo.fetch(TransferLimits{2s, nullptr});
    auto took = std::chrono::steady_clock::now() - started;
    REQUIRE_FALSE(fetched.has_value());
    CHECK(fetched.error().code == ErrorCode::timeout);
    CHECK_THAT(fetched.error().message, Catch::Contains("fetch " + silent.url() + ": timed out after 2s"));
    CHECK(took < 10s);
    CHECK(Repository::open(mirror_dir).value().resolve("master").value() == head);
  }
  SECTION("cancelled (the daemon stops): the child goes at once") {
    std::atomic<bool> cancel{true};
    auto repo = Repository::mirror(silent.url(), mirror_dir, TransferLimits{60s, &cancel});
    REQUIRE_FALSE(repo.has_value());
    CHECK(repo.error().code == ErrorCode::cancelled);
    CHECK_FALSE(std::filesystem::exists(mirror_dir));
  }
}
