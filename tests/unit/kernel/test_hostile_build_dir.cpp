// KernelBuilder on a fake kernel tree (a Makefile answering tinyconfig, olddefconfig, bzImage and kernelrelease)
// whose build plants what issue 29 found: `.config` a symlink to a secret (the token), a sparse 1 GiB `.config`,
// System.map a symlink to the secret, a `.*.cmd` symlink. The daemon reads the build dir only through
// base::read_untrusted / copy_untrusted: each build ends as infra with one line naming the file and why, the secret
// is in nothing the builder returns, logs or stores, and the daemon's memory does not grow by the file's size. Runs
// under bubblewrap (the daemon's default `sandbox: auto`) with the secret's directory hidden, when bwrap works here.

#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/sandbox.hpp"
#include "kbuild/kernel_builder.hpp"
#include "kbuild/relevance.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <filesystem>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

const std::string k_secret = "SECRET-TOKEN-d2f1c0ffee29";

// `make -C <tree> O=<objdir> ... <target>` as kbuild answers it, in a few lines. PLANT_* say what the build
// leaves behind instead of an honest file; olddefconfig prints the config (as Kconfig's warnings quote its lines).
const std::string k_makefile = R"MK(
tinyconfig:
	@if [ -n "$(PLANT_CONFIG_LINK)" ]; then ln -sf "$(PLANT_CONFIG_LINK)" "$(O)/.config"; \
	elif [ -n "$(PLANT_SPARSE_CONFIG)" ]; then rm -f "$(O)/.config"; truncate -s 1G "$(O)/.config"; \
	else printf 'CONFIG_64BIT=y\n' > "$(O)/.config"; fi
olddefconfig:
	@cat "$(O)/.config"
bzImage:
	@mkdir -p "$(O)/arch/x86/boot" "$(O)/kernel"
	@printf 'bzImage of $(LOCALVERSION)\n' > "$(O)/arch/x86/boot/bzImage"
	@printf 'vmlinux of $(LOCALVERSION)\n' > "$(O)/vmlinux"
	@printf 'source_kernel/fork.o := $(CURDIR)/kernel/fork.c\n' > "$(O)/kernel/.fork.o.cmd"
	@if [ -n "$(PLANT_MAP_LINK)" ]; then ln -sf "$(PLANT_MAP_LINK)" "$(O)/System.map"; \
	else printf 'ffffffff81000000 T _text\n' > "$(O)/System.map"; fi
	@if [ -n "$(PLANT_CMD_LINK)" ]; then ln -sf "$(PLANT_CMD_LINK)" "$(O)/kernel/.sched.o.cmd"; fi
kernelrelease:
	@echo 6.99.0$(LOCALVERSION)
)MK";

long peak_rss_kb() {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  return self.ru_maxrss;
}

// Every byte under `dir` (regular files only, links not followed) contains no `needle`.
bool nowhere_under(const fs::path& dir, const std::string& needle) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_symlink() || !it->is_regular_file()) {
      continue;
    }
    if (base::read_file(it->path()).value_or("").find(needle) != std::string::npos) {
      UNSCOPED_INFO(it->path().string() + " holds the secret");
      return false;
    }
  }
  return true;
}

struct Fixture {
  test::TempDir tmp;
  fs::path secret_dir = tmp.path() / "secret";
  fs::path secret = tmp.path() / "secret" / "token";
  kbuild::BuildStore store{tmp.path() / "store"};
  kbuild::KernelBuilder builder{store, tmp.path() / "kbuild"};
  bool sandboxed = false;

  Fixture() {
    REQUIRE(base::find_program("make"));
    tmp.write("src/Makefile", k_makefile);
    tmp.write("src/kernel/fork.c", "int fork;\n");
    tmp.write("secret/token", k_secret + "\n");
    // As the daemon does under `sandbox: auto`: bwrap when it works here, hiding the token's directory.
    sandboxed = base::sandbox_unusable("bwrap").empty();
    if (sandboxed) {
      base::set_sandbox_policy(base::SandboxPolicy{.enabled = true, .bwrap = "bwrap", .hidden = {secret_dir}});
    }
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() { base::set_sandbox_policy(base::SandboxPolicy{}); }

  [[nodiscard]] kbuild::BuildRequest request(const std::string& plant = "", const std::string& value = "") const {
    kbuild::BuildRequest request;
    request.tree = "linux";
    request.commit = "0123456789abcdef0123456789abcdef01234567";
    request.worktree = tmp.path() / "src";
    request.recipe.kind = kbuild::RecipeKind::kernel;
    request.recipe.config = "tinyconfig";
    request.recipe.timeout = 120s;
    if (!plant.empty()) {
      request.recipe.env[plant] = value;
    }
    return request;
  }

  [[nodiscard]] fs::path build_dir(const kbuild::BuildRequest& req) const {
    return builder.build_dir_for(req.tree, req.recipe.hash().value(), req.worktree);
  }

  // The build's result, with the checks every hostile case shares: infra, one line naming `file` and `why`, and
  // the secret nowhere in the message, the log, the store or the build dir.
  void check_refused(const kbuild::BuildRequest& req, const std::string& file, const std::string& why) {
    INFO("sandboxed: " << sandboxed);
    auto result = builder.build(req);
    REQUIRE(result);
    INFO(result->message);
    CHECK(result->outcome == kbuild::BuildOutcome::infra);
    CHECK(result->message.find(file + ": refused: " + why) != std::string::npos);
    CHECK(result->message.find('\n') == std::string::npos);
    CHECK(result->message.find(k_secret) == std::string::npos);
    auto log = base::read_file(result->log_path).value_or("");
    INFO(log.substr(0, 2000));
    CHECK(log.find(k_secret) == std::string::npos);
    CHECK(log.find("refused: " + why) != std::string::npos);
    CHECK(nowhere_under(tmp.path() / "store", k_secret));
    CHECK_FALSE(fs::exists(build_dir(req))); // removed: the retry starts afresh
    CHECK(base::read_file(secret).value_or("") == k_secret + "\n");
    CHECK(store.lookup(req.commit, req.recipe.hash().value()) == std::nullopt); // infra: not stored
  }
};

} // namespace

TEST_CASE("KernelBuilder builds a fake kernel tree and keeps its artifacts", "[kernel]") {
  Fixture fx;
  INFO("sandboxed: " << fx.sandboxed);
  auto result = fx.builder.build(fx.request());
  REQUIRE(result);
  INFO(result->message << "\n" << base::read_file(result->log_path).value_or(""));
  REQUIRE(result->outcome == kbuild::BuildOutcome::ok);
  CHECK(result->kernel_release == "6.99.0-g0123456789ab");
  CHECK(base::read_file(result->artifact_dir / "System.map").value_or("") == "ffffffff81000000 T _text\n");
  CHECK(base::read_file(result->artifact_dir / "config").value_or("").find("CONFIG_64BIT=y") != std::string::npos);
  CHECK(fs::is_regular_file(result->artifact_dir / "bzImage"));
  CHECK(base::read_file(result->artifact_dir / kbuild::k_used_sources_file).value_or("") == "kernel/fork.c\n");
}

TEST_CASE("KernelBuilder refuses a .config the build made a symlink to the token", "[kernel]") {
  Fixture fx;
  fx.check_refused(fx.request("PLANT_CONFIG_LINK", fx.secret.string()), ".config", "a symlink");
}

TEST_CASE("KernelBuilder refuses a sparse 1 GiB .config without reading it", "[kernel]") {
  Fixture fx;
  auto before = peak_rss_kb();
  fx.check_refused(fx.request("PLANT_SPARSE_CONFIG", "1"), ".config", "larger than 16777216 bytes");
  CHECK(peak_rss_kb() - before < 128 * 1024); // read whole, the peak would grow by a GiB and more
}

TEST_CASE("KernelBuilder refuses a System.map the build made a symlink to the token", "[kernel]") {
  Fixture fx;
  fx.check_refused(fx.request("PLANT_MAP_LINK", fx.secret.string()), "System.map", "a symlink");
}

TEST_CASE("KernelBuilder refuses a .*.cmd file the build made a symlink", "[kernel]") {
  Fixture fx;
  fx.tmp.write("secret/cmd", "source_x.o := " + (fx.tmp.path() / "src" / "SECRET-TOKEN-d2f1c0ffee29.c").string() + "\n");
  fx.check_refused(fx.request("PLANT_CMD_LINK", (fx.secret_dir / "cmd").string()), ".sched.o.cmd", "a symlink");
}
