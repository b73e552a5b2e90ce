#include "kbuild/builder.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <functional>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

kbuild::Recipe kernel_recipe(const std::filesystem::path& fragment) {
  kbuild::Recipe recipe;
  recipe.kind = kbuild::RecipeKind::kernel;
  recipe.config = "tinyconfig";
  recipe.fragment = fragment;
  recipe.extra_options = {"CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y"};
  recipe.kcflags = "-falign-functions=64";
  recipe.env = {{"CC", "gcc"}};
  return recipe;
}

std::string hash_of(const kbuild::Recipe& recipe) {
  auto hash = recipe.hash();
  REQUIRE(hash);
  return *hash;
}

} // namespace

TEST_CASE("kbuild::Recipe::hash is stable and ignores the timeout", "[kbuild]") {
  test::TempDir tmp;
  auto recipe = kernel_recipe(tmp.write("frag.config", "CONFIG_SMP=y\n"));
  auto first = hash_of(recipe);
  CHECK(first.size() == 16);
  CHECK(hash_of(recipe) == first);
  auto copy = recipe;
  copy.timeout = 5s;
  CHECK(hash_of(copy) == first);
}

TEST_CASE("kbuild::Recipe::hash changes with every output-relevant field", "[kbuild]") {
  test::TempDir tmp;
  auto base_recipe = kernel_recipe(tmp.write("frag.config", "CONFIG_SMP=y\n"));
  auto base_hash = hash_of(base_recipe);
  std::vector<std::pair<std::string, std::function<void(kbuild::Recipe&)>>> changes = {
    {"kind", [](auto& r) { r.kind = kbuild::RecipeKind::command; }},
    {"command", [](auto& r) { r.command = {"make"}; }},
    {"artifacts", [](auto& r) { r.artifacts = {"bench"}; }},
    {"env", [](auto& r) { r.env["CC"] = "clang"; }},
    {"config", [](auto& r) { r.config = "defconfig"; }},
    {"extra_options", [](auto& r) { r.extra_options.push_back("CONFIG_KASAN=y"); }},
    {"kcflags", [](auto& r) { r.kcflags = ""; }},
    {"arch", [](auto& r) { r.arch = "arm64"; }},
    {"modules", [](auto& r) { r.modules = true; }},
    {"no fragment", [](auto& r) { r.fragment.clear(); }},
  };
  for (const auto& [field, change] : changes) {
    INFO("field " << field);
    auto changed = base_recipe;
    change(changed);
    CHECK(hash_of(changed) != base_hash);
  }
}

TEST_CASE("kbuild::Recipe::hash keeps list boundaries apart", "[kbuild]") {
  kbuild::Recipe a;
  a.command = {"ab", "c"};
  kbuild::Recipe b;
  b.command = {"a", "bc"};
  CHECK(hash_of(a) != hash_of(b));
  kbuild::Recipe c;
  c.command = {"make"};
  c.artifacts = {"bench"};
  kbuild::Recipe d;
  d.command = {"make", "bench"};
  CHECK(hash_of(c) != hash_of(d));
}

TEST_CASE("kbuild::Recipe::hash follows the fragment's content, not its path", "[kbuild]") {
  test::TempDir tmp;
  auto recipe = kernel_recipe(tmp.write("a/frag.config", "CONFIG_SMP=y\n"));
  auto before = hash_of(recipe);

  auto moved = kernel_recipe(tmp.write("b/other.config", "CONFIG_SMP=y\n"));
  CHECK(hash_of(moved) == before);

  tmp.write("a/frag.config", "CONFIG_SMP=n\n");
  CHECK(hash_of(recipe) != before);
}

TEST_CASE("kbuild::Recipe::hash fails naming an unreadable fragment or config file", "[kbuild]") {
  test::TempDir tmp;
  auto recipe = kernel_recipe(tmp.path() / "missing.config");
  auto hash = recipe.hash();
  REQUIRE_FALSE(hash);
  CHECK(hash.error().code == ErrorCode::invalid_config);
  CHECK_THAT(hash.error().message, Catch::Contains("build.fragment") && Catch::Contains("missing.config"));

  auto config_file = kernel_recipe({});
  config_file.config = (tmp.path() / "nope.config").string();
  auto config_hash = config_file.hash();
  REQUIRE_FALSE(config_hash);
  CHECK_THAT(config_hash.error().message, Catch::Contains("nope.config"));

  // An absolute config file is hashed by content too.
  auto file = tmp.write("my.config", "CONFIG_A=y\n");
  config_file.config = file.string();
  auto first = hash_of(config_file);
  tmp.write("my.config", "CONFIG_A=n\n");
  CHECK(hash_of(config_file) != first);
}
