// What a tree's code must not reach through the sandbox: the job's environment outside it (bwrap and chrt run with
// the daemon's own environment), the daemon's secret files and the host's Unix sockets.
#include "base/fs.hpp"
#include "base/loader_env.hpp"
#include "base/process.hpp"
#include "base/sandbox.hpp"
#include "base/strings.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>

using namespace bisectd;

namespace {

std::vector<std::string> lines_of(const std::filesystem::path& file) {
  auto text = base::read_file(file);
  return text ? base::split_lines(*text) : std::vector<std::string>{};
}

} // namespace

TEST_CASE("the job's environment is not the environment of bwrap and chrt", "[base]") {
  test::TempDir dir;
  // A stand-in for bwrap: records its own environment and argv, runs nothing.
  auto fake_bwrap = dir.path() / "bwrap";
  REQUIRE(base::write_file_atomic(fake_bwrap, "#!/bin/sh\nenv > \"" + (dir.path() / "env").string() +
                                                "\"\nprintf '%s\\n' \"$@\" > \"" + (dir.path() / "argv").string() +
                                                "\"\n"));
  ::chmod(fake_bwrap.c_str(), 0755);
  base::set_sandbox_policy({.enabled = true, .bwrap = fake_bwrap.string(), .hidden = {}});
  base::Command cmd;
  cmd.argv = {"true"};
  cmd.env = {{"LD_PRELOAD", "/nonexistent/libmarker.so"}, {"JOB_VAR", "job"}};
  cmd.idle_priority = true;
  cmd.sandbox = base::Sandbox{};
  auto status = base::run(cmd);
  base::set_sandbox_policy({});
  REQUIRE(status);
  INFO(status->err);
  REQUIRE(status->ok());

  auto env = lines_of(dir.path() / "env");
  REQUIRE(!env.empty());
  CHECK(std::none_of(env.begin(), env.end(), [](const auto& l) { return l.starts_with("LD_PRELOAD="); }));
  CHECK(std::none_of(env.begin(), env.end(), [](const auto& l) { return l.starts_with("JOB_VAR="); }));
  auto argv = lines_of(dir.path() / "argv");
  const std::vector<std::string> job_var{"--setenv", "JOB_VAR", "job"};
  auto setenv = std::search(argv.begin(), argv.end(), job_var.begin(), job_var.end());
  CHECK(setenv != argv.end()); // the job's variables reach the sandboxed command only
  auto command = std::find(argv.begin(), argv.end(), "--");
  REQUIRE(command != argv.end());
  if (base::find_program("chrt")) { // SCHED_IDLE is set inside the sandbox, by a chrt that bwrap starts
    CHECK(std::vector<std::string>(command + 1, argv.end()) == std::vector<std::string>{"chrt", "--idle", "0", "true"});
  }
}

TEST_CASE("the sandbox hides configured secret files and the host's sockets", "[base]") {
  if (auto why = base::sandbox_unusable("bwrap"); !why.empty()) {
    WARN("bwrap is not usable here, the sandbox is not exercised: " << why);
    return;
  }
  test::TempDir dir; // not hidden itself: only the key file in it is a secret
  auto key = dir.path() / "lab_ssh_key";
  REQUIRE(base::write_file_atomic(key, "PRIVATE KEY\n"));
  base::set_sandbox_policy({.enabled = true, .bwrap = "bwrap", .hidden = {key}});
  base::Command cmd;
  cmd.argv = {"sh", "-c", "cat \"$1\" 2>/dev/null; echo \"|$(ls -A /run/ | wc -l)|$(ls -A /var/run/ | wc -l)\"", "sh",
              key.string()};
  cmd.sandbox = base::Sandbox{.writable = {}, .readable = {dir.path()}};
  auto status = base::run(cmd);
  base::set_sandbox_policy({});
  REQUIRE(status);
  INFO(status->err);
  CHECK(status->out == "|0|0\n"); // no key text; /run and /var/run empty
}

TEST_CASE("loader variables are recognised", "[base]") {
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_ANYTHING", "GCONV_PATH", "GLIBC_TUNABLES",
                           "LOCPATH", "NLSPATH", "HOSTALIASES", "RES_OPTIONS"}) {
    CHECK(base::is_loader_variable(name));
  }
  for (const char* name : {"CC", "PATH", "KCFLAGS", "TMPDIR", "OLD_PRELOAD", "ld_preload"}) {
    CHECK_FALSE(base::is_loader_variable(name));
  }
}
