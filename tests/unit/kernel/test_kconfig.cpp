#include "base/fs.hpp"
#include "kbuild/kconfig.hpp"
#include "kbuild/kernel_builder.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;
using kbuild::KconfigOption;

TEST_CASE("kbuild::parse_fragment reads options and skips comments", "[kernel]") {
  auto options = kbuild::parse_fragment("# a comment\n\nCONFIG_TTY=y\n# CONFIG_SMP is not set\n"
                                        "CONFIG_LOCALVERSION=\"-x\"\nCONFIG_NR_CPUS=4\n",
                                        "frag");
  REQUIRE(options);
  CHECK(*options ==
        std::vector<KconfigOption>{
          {"CONFIG_TTY", "y"}, {"CONFIG_SMP", "n"}, {"CONFIG_LOCALVERSION", "\"-x\""}, {"CONFIG_NR_CPUS", "4"}});
}

TEST_CASE("kbuild::parse_fragment names the bad line", "[kernel]") {
  auto options = kbuild::parse_fragment("CONFIG_TTY=y\nTTY=y\n", "qemu.config");
  REQUIRE_FALSE(options);
  CHECK(options.error().code == ErrorCode::invalid_config);
  CHECK(options.error().message.find("qemu.config:2") != std::string::npos);
  CHECK_FALSE(kbuild::parse_fragment("CONFIG_TTY=\n", "f"));
  CHECK_FALSE(kbuild::parse_fragment("# CONFIG_BAD-NAME is not set\n", "f"));
}

TEST_CASE("kbuild::merge_fragment replaces and appends options", "[kernel]") {
  std::string config = "# header\nCONFIG_TTY=y\nCONFIG_SMP=y\n# CONFIG_PRINTK is not set\nCONFIG_X=1\n";
  auto merged = kbuild::merge_fragment(config, {{"CONFIG_SMP", "n"}, {"CONFIG_PRINTK", "y"}, {"CONFIG_NEW", "m"}});
  CHECK(merged == "# header\nCONFIG_TTY=y\nCONFIG_X=1\n# CONFIG_SMP is not set\nCONFIG_PRINTK=y\nCONFIG_NEW=m\n");
  auto parsed = kbuild::parse_config(merged);
  CHECK(parsed.at("CONFIG_SMP") == "n");
  CHECK(parsed.at("CONFIG_PRINTK") == "y");
  CHECK(parsed.size() == 5);
}

TEST_CASE("kbuild::missing_options lists the options olddefconfig dropped", "[kernel]") {
  auto config = kbuild::parse_config("CONFIG_TTY=y\nCONFIG_SERIAL_8250=m\nCONFIG_LOCALVERSION=\"\"\n");
  SECTION("all present") {
    CHECK(kbuild::missing_options(config, {{"CONFIG_TTY", "y"}, {"CONFIG_ABSENT", "n"}}).empty());
  }
  SECTION("dropped and changed options are named with their new state") {
    auto missing = kbuild::missing_options(
      config, {{"CONFIG_TTY", "y"}, {"CONFIG_E1000", "y"}, {"CONFIG_SERIAL_8250", "y"}, {"CONFIG_TTY", "n"}});
    CHECK(missing == std::vector<std::string>{"CONFIG_E1000=y (now not set)", "CONFIG_SERIAL_8250=y (now m)",
                                              "# CONFIG_TTY is not set (now y)"});
  }
}

TEST_CASE("kbuild::KernelBuilder::wanted_options = fragment + extra + LOCALVERSION_AUTO off", "[kernel]") {
  test::TempDir tmp;
  kbuild::Recipe recipe;
  recipe.kind = kbuild::RecipeKind::kernel;
  recipe.fragment = tmp.write("frag.config", "CONFIG_TTY=y\n");
  recipe.extra_options = {"CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y"};
  auto wanted = kbuild::KernelBuilder::wanted_options(recipe);
  REQUIRE(wanted);
  CHECK(*wanted == std::vector<KconfigOption>{{"CONFIG_TTY", "y"},
                                              {"CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B", "y"},
                                              {"CONFIG_LOCALVERSION_AUTO", "n"}});
  recipe.extra_options = {"-falign-functions=64"};
  CHECK_FALSE(kbuild::KernelBuilder::wanted_options(recipe));
}

TEST_CASE("configs/kconfig/qemu-x86_64.config is a valid fragment with the boot essentials", "[kernel]") {
  auto text = base::read_file(std::string(BISECTD_SOURCE_DIR) + "/configs/kconfig/qemu-x86_64.config");
  REQUIRE(text);
  auto options = kbuild::parse_fragment(*text, "qemu-x86_64.config");
  REQUIRE(options);
  std::map<std::string, std::string> by_name;
  for (const auto& option : *options) {
    by_name[option.name] = option.value;
  }
  for (const char* name :
       {"CONFIG_64BIT", "CONFIG_PRINTK", "CONFIG_TTY", "CONFIG_SERIAL_8250", "CONFIG_SERIAL_8250_CONSOLE",
        "CONFIG_BLK_DEV_INITRD", "CONFIG_RD_GZIP", "CONFIG_BINFMT_ELF", "CONFIG_BINFMT_SCRIPT", "CONFIG_DEVTMPFS",
        "CONFIG_PROC_FS", "CONFIG_SYSFS", "CONFIG_TMPFS", "CONFIG_FUTEX", "CONFIG_MULTIUSER"}) {
    INFO(name);
    CHECK(by_name[name] == "y");
  }
  CHECK(by_name["CONFIG_LOCALVERSION_AUTO"] == "n");
}
