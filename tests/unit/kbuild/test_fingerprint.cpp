#include "kbuild/build_store.hpp"
#include "kbuild/command_builder.hpp"
#include "kbuild/fingerprint.hpp"
#include "kbuild/kernel_make.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t k_chunk = 1 << 20; // the scanner's read size: stamps across it must still be masked

// A GNU build-id note (namesz 4, descsz 20, type 3, "GNU\0") with a 20-byte id made from `seed`.
std::string build_id_note(char seed) {
  std::string note("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16);
  for (int i = 0; i < 20; ++i) {
    note += static_cast<char>(seed + i);
  }
  return note;
}

// A fake vmlinux: code bytes with the release in the banner and in init_uts_ns, the bare localversion once,
// and a build-id note; the second release and the build-id straddle the 1 MiB read boundary.
std::string fake_image(const std::string& sha12, char build_id_seed, char code_byte = 'c') {
  std::string release = "6.8.0-g" + sha12;
  std::string image(1000, code_byte);
  image += "Linux version " + release + " (bisectd@bisectd) #1 SMP 2000-01-01 00:00:00 UTC";
  image += std::string(200, '\x90') + "-g" + sha12 + std::string(100, '\0');
  image += std::string(k_chunk - 8 - image.size(), '\xcc') + release + std::string(5000, '\x90');
  image += std::string(2 * k_chunk - 10 - image.size(), '\x0f') + build_id_note(build_id_seed);
  return image + std::string(3000, '\x01');
}

std::vector<std::string> stamps_for(const std::string& sha12) { return {"6.8.0-g" + sha12, "-g" + sha12}; }

} // namespace

TEST_CASE("kbuild::sha256_hex matches the FIPS 180-4 test vectors", "[kbuild]") {
  CHECK(kbuild::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(kbuild::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(kbuild::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(kbuild::sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("kbuild::kernel_fingerprint ignores the release stamp and the build id", "[kbuild]") {
  test::TempDir tmp;
  auto a = tmp.write("a/vmlinux", fake_image("0123456789ab", 'A'));
  auto b = tmp.write("b/vmlinux", fake_image("fedcba987654", 'Z'));
  auto fa = kbuild::kernel_fingerprint(a, stamps_for("0123456789ab"));
  auto stamps_b = stamps_for("fedcba987654");
  std::ranges::reverse(stamps_b); // the order of the stamps does not matter
  auto fb = kbuild::kernel_fingerprint(b, stamps_b);
  REQUIRE(fa);
  REQUIRE(fb);
  CHECK(fa->size() == 64);
  CHECK(*fa == *fb);
  // Without stripping the two images differ, so the equality above is the masking's doing.
  CHECK(kbuild::sha256_hex(fake_image("0123456789ab", 'A')) != kbuild::sha256_hex(fake_image("fedcba987654", 'Z')));

  SECTION("one changed code byte changes the fingerprint") {
    auto image = fake_image("fedcba987654", 'Z');
    image[k_chunk + 17] ^= 1;
    auto changed = kbuild::kernel_fingerprint(tmp.write("c/vmlinux", image), stamps_for("fedcba987654"));
    REQUIRE(changed);
    CHECK(*changed != *fa);
  }
  SECTION("a stamp of another commit is not masked") {
    auto other = kbuild::kernel_fingerprint(b, stamps_for("0123456789ab"));
    REQUIRE(other);
    CHECK(*other != *fa);
  }
}

TEST_CASE("kbuild::kernel_fingerprint errors name the file", "[kbuild]") {
  test::TempDir tmp;
  auto missing = kbuild::kernel_fingerprint(tmp.path() / "nowhere" / "vmlinux", {"6.8.0-g0123456789ab"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find((tmp.path() / "nowhere" / "vmlinux").string()) != std::string::npos);
  CHECK_FALSE(kbuild::kernel_fingerprint(tmp.write("vmlinux", "x"), {""}));
}

TEST_CASE("kbuild::tree_fingerprint masks the release in module paths and contents", "[kbuild]") {
  test::TempDir tmp;
  auto install = [&](const std::string& root, const std::string& sha12, const std::string& code) {
    auto release = "6.8.0-g" + sha12;
    auto dir = root + "/lib/modules/" + release;
    tmp.write(dir + "/kernel/drivers/a.ko", code + "vermagic=" + release + " SMP mod_unload" + build_id_note(sha12[0]));
    tmp.write(dir + "/modules.dep", "kernel/drivers/a.ko:\n");
    return stamps_for(sha12);
  };
  auto one = kbuild::tree_fingerprint(tmp.path() / "one", install("one", "0123456789ab",
                                                                  "\x7f"
                                                                  "ELF code"));
  auto two = kbuild::tree_fingerprint(tmp.path() / "two", install("two", "fedcba987654",
                                                                  "\x7f"
                                                                  "ELF code"));
  auto other = kbuild::tree_fingerprint(tmp.path() / "three", install("three", "fedcba987654",
                                                                      "\x7f"
                                                                      "ELF cod3"));
  REQUIRE(one);
  REQUIRE(two);
  REQUIRE(other);
  CHECK(*one == *two);
  CHECK(*other != *one); // a module's code changed
  tmp.write("two/lib/modules/6.8.0-gfedcba987654/kernel/drivers/b.ko", "new module");
  CHECK(*kbuild::tree_fingerprint(tmp.path() / "two", stamps_for("fedcba987654")) != *one);
}

TEST_CASE("kbuild::artifacts_fingerprint hashes names and contents", "[kbuild]") {
  test::TempDir tmp;
  tmp.write("one/bench", "binary");
  tmp.write("one/lib/a.so", "A");
  tmp.write("two/bench", "binary");
  tmp.write("two/lib/a.so", "A");
  std::vector<std::string> artifacts{"bench", "lib"};
  auto one = kbuild::artifacts_fingerprint(tmp.path() / "one", artifacts);
  auto two = kbuild::artifacts_fingerprint(tmp.path() / "two", artifacts);
  REQUIRE(one);
  REQUIRE(two);
  CHECK(*one == *two);

  tmp.write("two/lib/a.so", "B");
  CHECK(*kbuild::artifacts_fingerprint(tmp.path() / "two", artifacts) != *one);
  tmp.write("two/lib/a.so", "A");
  std::filesystem::rename(tmp.path() / "two/lib/a.so", tmp.path() / "two/lib/b.so");
  CHECK(*kbuild::artifacts_fingerprint(tmp.path() / "two", artifacts) != *one);

  auto missing = kbuild::artifacts_fingerprint(tmp.path() / "one", {"bench", "gone"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find((tmp.path() / "one" / "gone").string()) != std::string::npos);
}

TEST_CASE("kbuild::CommandBuilder stores equal fingerprints for equal artifacts", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path() / "builds");
  kbuild::CommandBuilder builder(store);
  kbuild::BuildRequest request;
  request.tree = "demo";
  request.worktree = tmp.path() / "work";
  request.recipe.command = {"cp", "src.txt", "out.txt"};
  request.recipe.artifacts = {"out.txt"};
  request.recipe.timeout = 30s;
  auto build = [&](const std::string& commit, const std::string& content) {
    tmp.write("work/src.txt", content);
    request.commit = commit;
    auto built = builder.build(request);
    REQUIRE(built);
    REQUIRE(built->outcome == kbuild::BuildOutcome::ok);
    return built->fingerprint;
  };
  auto first = build("c0ffee01", "same");
  CHECK(first.size() == 64);
  CHECK(build("c0ffee02", "same") == first);
  CHECK(build("c0ffee03", "changed") != first);
  auto hash = request.recipe.hash();
  REQUIRE(hash);
  auto stored = store.lookup("c0ffee01", *hash);
  REQUIRE(stored);
  CHECK(stored->fingerprint == first); // kept in the store, so reused builds keep it
}

TEST_CASE("kbuild::BuildStore reads results stored without a fingerprint as unknown", "[kbuild]") {
  test::TempDir tmp;
  kbuild::BuildStore store(tmp.path() / "builds");
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  tmp.write("builds/a1b2/" + commit + "/result",
            "bisectd-build-result 1\noutcome ok\nseconds 3\nkernel_release \nlog build.log\nartifact_dir artifacts\n"
            "message \n");
  auto old = store.lookup(commit, "a1b2");
  REQUIRE(old);
  CHECK(old->outcome == kbuild::BuildOutcome::ok);
  CHECK(old->fingerprint.empty());
}

TEST_CASE("kbuild::make_argv fixes the build number and time (binaries differ only by their release)", "[kbuild]") {
  kbuild::KernelMake make;
  make.worktree = "/src/linux";
  make.objdir = "/build/linux-abc";
  make.localversion = "-g0123456789ab";
  auto argv = kbuild::make_argv(make, {"bzImage"}, 2);
  auto has_prefix = [&](std::string_view prefix) {
    return std::ranges::any_of(argv, [&](const std::string& a) { return a.starts_with(prefix); });
  };
  CHECK(has_prefix("KBUILD_BUILD_TIMESTAMP=2000-01-01"));
  CHECK(std::ranges::find(argv, std::string("KBUILD_BUILD_VERSION=1")) != argv.end());
  CHECK(has_prefix("KBUILD_BUILD_USER="));
  CHECK(has_prefix("KBUILD_BUILD_HOST="));
}
