// What a report takes from the tree's code: the compiler line comes from a CC asked inside the sandbox (or not at
// all), get_maintainer.pl's addresses are capped and validated before they can reach a mail's headers.
#include "base/fs.hpp"
#include "base/sandbox.hpp"
#include "daemon/reporting/reporter.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

using namespace bisectd;

namespace {

void write_script(const std::filesystem::path& path, const std::string& text) {
  REQUIRE(base::write_file_atomic(path, "#!/bin/sh\n" + text));
  ::chmod(path.c_str(), 0755);
}

} // namespace

TEST_CASE("report additions: the compiler is probed inside the sandbox or not at all", "[daemon][report]") {
  test::TempDir dir;
  auto ran = dir.path() / "cc-ran";
  auto cc = dir.path() / "cc";
  write_script(cc, "echo ran >> '" + ran.string() +
                     "'\ncase \"$1\" in --version) echo 'gcc (Fake) 12.2.0';; "
                     "-dumpversion) echo 12.2.0;; esac\n");
  // A stand-in for bwrap that records it was asked and runs the command after "--" (no real sandbox needed).
  auto bwrap = dir.path() / "bwrap";
  auto asked = dir.path() / "bwrap-argv";
  write_script(bwrap, "printf '%s\\n' \"$@\" >> '" + asked.string() +
                        "'\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n");
  kbuild::Recipe recipe;
  recipe.env["CC"] = cc.string();

  SECTION("no sandbox: the tree's CC is not run") {
    base::set_sandbox_policy({});
    CHECK(daemon::reporting::compiler_label(recipe).empty());
    CHECK_FALSE(std::filesystem::exists(ran));
  }
  SECTION("sandbox: CC runs through bwrap") {
    base::set_sandbox_policy({.enabled = true, .bwrap = bwrap.string(), .hidden = {}});
    auto label = daemon::reporting::compiler_label(recipe);
    base::set_sandbox_policy({});
    CHECK(label == "gcc-12");
    auto argv = base::read_file(asked);
    REQUIRE(argv);
    CHECK(argv->find(cc.string() + "\n--version\n") != std::string::npos);
  }
  SECTION("a version that is not one adds nothing") {
    write_script(cc, "case \"$1\" in --version) echo gcc;; -dumpversion) printf '12\\r\\nX-Injected: yes\\n';; esac\n");
    base::set_sandbox_policy({.enabled = true, .bwrap = bwrap.string(), .hidden = {}});
    auto label = daemon::reporting::compiler_label(recipe);
    base::set_sandbox_policy({});
    CHECK(label.empty());
  }
}

TEST_CASE("report additions: get_maintainer.pl's lines are plausible addresses, capped", "[daemon][report]") {
  std::string output = "Jane Doe <jane@example.org>\nlinux-kernel@vger.kernel.org\nnot an address\n"
                       "Evil <e@x.org>\rBcc: all@example.org\nX <" +
                       std::string(300, 'a') + "@example.org>\n";
  for (int i = 0; i < 100; ++i) {
    output += "dev" + std::to_string(i) + " <dev" + std::to_string(i) + "@example.org>\n";
  }
  auto got = daemon::reporting::plausible_maintainers(output);
  REQUIRE(got.size() == daemon::reporting::k_max_maintainers);
  CHECK(got[0] == "Jane Doe <jane@example.org>");
  CHECK(got[1] == "linux-kernel@vger.kernel.org");
  CHECK(got[2] == "dev0 <dev0@example.org>"); // the bad lines are left out
  for (const auto& line : got) {
    CHECK(line.find('\r') == std::string::npos);
    CHECK(line.size() <= daemon::reporting::k_max_maintainer_line);
  }
}
