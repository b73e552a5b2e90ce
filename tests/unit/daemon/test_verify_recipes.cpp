#include "daemon/run/builds.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace bisectd;
using namespace bisectd::daemon;
using namespace bisectd::daemon::run;

TEST_CASE("recipe_for builds the verification variants") {
  Job kernel;
  kernel.build.kind = kbuild::RecipeKind::kernel;
  kernel.build.config = "tinyconfig";
  auto layout = recipe_for(kernel, "layout");
  CHECK(std::ranges::count(layout.extra_options, "CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y") == 1);
  CHECK(layout.kcflags.empty());
  auto fallback = recipe_for(kernel, "layout-kcflags");
  CHECK(fallback.kcflags == "-falign-functions=64");
  CHECK(fallback.extra_options.empty());
  CHECK(*recipe_for(kernel, "revert:0123abcd").hash() == *recipe_for(kernel, "").hash());
  CHECK(*layout.hash() != *recipe_for(kernel, "").hash());

  Job command;
  command.build.command = {"make"};
  command.verify.layout_env = {{"EXTRA_CFLAGS", "-DFORCE_ALIGN"}};
  CHECK(recipe_for(command, "layout").env.at("EXTRA_CFLAGS") == "-DFORCE_ALIGN");
  CHECK(recipe_for(command, "").env.empty());
  CHECK(recipe_for(command, "layout-kcflags").kcflags.empty()); // the fallback is for kernels only
}
