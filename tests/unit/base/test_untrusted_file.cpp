// base::open_untrusted / read_untrusted / copy_untrusted: what a watched tree's build leaves behind is read without
// following links, only from regular files, and never past a size cap (issue 29, item 1).

#include "base/fs.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

using namespace bisectd;

namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t k_cap = 1024 * 1024;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

long peak_rss_kb() {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  return self.ru_maxrss;
}

// A file of `size` bytes that takes no disk space (a hole).
fs::path sparse_file(const test::TempDir& tmp, const std::string& name, off_t size) {
  auto path = tmp.path() / name;
  base::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), size) == 0);
  return path;
}

} // namespace

TEST_CASE("read_untrusted reads a regular file within its cap", "[base]") {
  test::TempDir tmp;
  auto path = tmp.write("config", "CONFIG_X=y\n");
  auto text = base::read_untrusted(path, k_cap);
  REQUIRE(text);
  CHECK(*text == "CONFIG_X=y\n");
  CHECK(base::read_untrusted(tmp.path() / "missing", k_cap).error().code == ErrorCode::not_found);
}

TEST_CASE("read_untrusted refuses a symlink, naming the path and never the target's content", "[base]") {
  test::TempDir tmp;
  auto secret = tmp.write("token", "SECRET-TOKEN-29\n");
  auto link = tmp.path() / ".config";
  fs::create_symlink(secret, link);
  auto text = base::read_untrusted(link, k_cap);
  REQUIRE_FALSE(text);
  CHECK(text.error().code == ErrorCode::invalid_input);
  CHECK(text.error().message == link.string() + ": refused: a symlink");
  CHECK_FALSE(contains(text.error().message, "SECRET"));
  // A link to a directory or a dangling one is refused the same way.
  fs::create_symlink(tmp.path(), tmp.path() / "dirlink");
  CHECK(contains(base::read_untrusted(tmp.path() / "dirlink", k_cap).error().message, "a symlink"));
  fs::create_symlink(tmp.path() / "nowhere", tmp.path() / "dangling");
  CHECK(contains(base::read_untrusted(tmp.path() / "dangling", k_cap).error().message, "a symlink"));
}

TEST_CASE("read_untrusted refuses a fifo without waiting for a writer, and a directory", "[base]") {
  test::TempDir tmp;
  auto fifo = tmp.path() / "System.map";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto text = base::read_untrusted(fifo, k_cap); // plain open(2) would block here forever
  REQUIRE_FALSE(text);
  CHECK(text.error().code == ErrorCode::invalid_input);
  CHECK(text.error().message == fifo.string() + ": refused: not a regular file");
  auto dir = tmp.path() / "dir";
  fs::create_directories(dir);
  CHECK(base::read_untrusted(dir, k_cap).error().message == dir.string() + ": refused: a directory");
  CHECK_FALSE(base::copy_untrusted(fifo, tmp.path() / "copy", k_cap));
  CHECK_FALSE(fs::exists(tmp.path() / "copy"));
}

TEST_CASE("read_untrusted refuses a sparse file over its cap without reading it", "[base]") {
  test::TempDir tmp;
  constexpr off_t k_size = 1024L * 1024 * 1024; // 1 GiB of hole: read whole it would cost 1 GiB of memory
  auto path = sparse_file(tmp, ".config", k_size);
  auto before = peak_rss_kb();
  auto text = base::read_untrusted(path, k_cap);
  REQUIRE_FALSE(text);
  CHECK(text.error().code == ErrorCode::invalid_input);
  CHECK(text.error().message == path.string() + ": refused: larger than 1048576 bytes (1073741824)");
  auto copied = base::copy_untrusted(path, tmp.path() / "copy", k_cap);
  REQUIRE_FALSE(copied);
  CHECK(contains(copied.error().message, "larger than 1048576 bytes"));
  CHECK(peak_rss_kb() - before < 64 * 1024); // the peak did not grow by anything near the file's size
  // Exactly the cap is still accepted.
  auto at_cap = sparse_file(tmp, "at-cap", static_cast<off_t>(k_cap));
  auto read = base::read_untrusted(at_cap, k_cap);
  REQUIRE(read);
  CHECK(read->size() == k_cap);
}

TEST_CASE("copy_untrusted copies a regular file and refuses a symlink without touching the target", "[base]") {
  test::TempDir tmp;
  auto from = tmp.write("bzImage", std::string(200000, 'k'));
  auto to = tmp.path() / "store" / "bzImage";
  fs::create_directories(to.parent_path());
  REQUIRE(base::copy_untrusted(from, to, k_cap));
  CHECK(base::read_file(to).value_or("") == std::string(200000, 'k'));

  auto secret = tmp.write("token", "SECRET-TOKEN-29\n");
  auto link = tmp.path() / "System.map";
  fs::create_symlink(secret, link);
  auto copy = base::copy_untrusted(link, tmp.path() / "store" / "System.map", k_cap);
  REQUIRE_FALSE(copy);
  CHECK(copy.error().message == link.string() + ": refused: a symlink");
  CHECK_FALSE(fs::exists(tmp.path() / "store" / "System.map"));
}

TEST_CASE("write_all types a full file system as infra", "[base]") {
  base::Fd full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  REQUIRE(full.valid());
  auto written = base::write_all(full.get(), "x");
  REQUIRE_FALSE(written);
  CHECK(written.error().code == ErrorCode::infra);
  CHECK(contains(written.error().message, "No space left on device"));
}

TEST_CASE("copy_untrusted keeps the permission bits but no set-id bit", "[base]") {
  test::TempDir tmp;
  auto from = tmp.write("bench", "#!/bin/sh\n", true);
  fs::permissions(from, fs::perms::set_uid, fs::perm_options::add);
  auto to = tmp.path() / "copy";
  REQUIRE(base::copy_untrusted(from, to, k_cap));
  auto perms = fs::status(to).permissions();
  CHECK((perms & fs::perms::owner_exec) != fs::perms::none);
  CHECK((perms & fs::perms::set_uid) == fs::perms::none);
}
