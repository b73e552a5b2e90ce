#include "base/fs.hpp"
#include "kbuild/relevance.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace bisectd;

namespace {

// The shape kbuild 6.1 writes for an out-of-tree build: paths relative to the build dir, config markers, a
// generated header, a compiler header outside both trees.
constexpr const char* k_memory_cmd =
  R"(cmd_mm/memory.o := ccache gcc -Wp,-MMD,mm/.memory.o.d -nostdinc -c -o mm/memory.o ../../src/linux/mm/memory.c

source_mm/memory.o := ../../src/linux/mm/memory.c

deps_mm/memory.o := \
  ../../src/linux/include/linux/kconfig.h \
    $(wildcard include/config/CPU_BIG_ENDIAN) \
  ../../src/linux/include/linux/mm.h \
  include/generated/autoconf.h \
  /usr/lib/gcc/x86_64-linux-gnu/12/include/stdarg.h \

mm/memory.o: $(deps_mm/memory.o)

$(deps_mm/memory.o):
)";

} // namespace

TEST_CASE("kbuild::parse_cmd_file lists the sources and headers under the source tree", "[kbuild]") {
  auto used = kbuild::parse_cmd_file(k_memory_cmd, "/cache/src/linux", "/cache/kbuild/linux-abc");
  CHECK(used == std::vector<std::string>{"mm/memory.c", "include/linux/kconfig.h", "include/linux/mm.h"});
  // Absolute entries (a build dir that kbuild could not reach relatively) work the same.
  auto absolute = kbuild::parse_cmd_file("source_init/main.o := /w/linux/init/main.c\n"
                                         "deps_init/main.o := \\\n  /w/linux/include/linux/init.h \\\n\n"
                                         "init/main.o: /w/linux/not/a/dep.h\n",
                                         "/w/linux", "/elsewhere/obj");
  CHECK(absolute == std::vector<std::string>{"init/main.c", "include/linux/init.h"});
  CHECK(kbuild::parse_cmd_file("cmd_x := gcc x.c\n", "/w/linux", "/obj").empty());
}

TEST_CASE("kbuild::scan_used_sources reads every .cmd file of a build dir", "[kbuild]") {
  test::TempDir tmp;
  auto objdir = tmp.path() / "kbuild" / "linux-abc";
  auto srctree = tmp.path() / "src" / "linux";
  std::filesystem::create_directories(objdir / "mm");
  std::filesystem::create_directories(objdir / "kernel");
  std::ofstream(objdir / "mm" / ".memory.o.cmd") << k_memory_cmd;
  std::ofstream(objdir / "kernel" / ".fork.o.cmd") << "source_kernel/fork.o := ../../src/linux/kernel/fork.c\n";
  std::ofstream(objdir / "kernel" / "fork.o.cmd") << "source_x := ../../src/linux/not-a-dot-file.c\n";
  auto used = kbuild::scan_used_sources(objdir, srctree);
  REQUIRE(used.has_value());
  CHECK(*used ==
        std::set<std::string>{"include/linux/kconfig.h", "include/linux/mm.h", "kernel/fork.c", "mm/memory.c"});
  CHECK_FALSE(kbuild::scan_used_sources(tmp.path() / "missing", srctree).has_value());
}

TEST_CASE("kbuild::touches_build: used files and kbuild machinery count, the rest does not", "[kbuild]") {
  std::set<std::string> used{"mm/memory.c", "include/linux/mm.h"};
  CHECK(kbuild::touches_build({"Documentation/mm/x.rst", "mm/memory.c"}, used));
  CHECK(kbuild::touches_build({"include/linux/mm.h"}, used));
  CHECK(kbuild::touches_build({"drivers/net/Kconfig"}, used)); // may switch an option on
  CHECK(kbuild::touches_build({"arch/x86/Makefile"}, used));
  CHECK(kbuild::touches_build({"scripts/link-vmlinux.sh"}, used));
  CHECK(kbuild::touches_build({"Makefile"}, used)); // top level: version, flags
  CHECK_FALSE(kbuild::touches_build({"Documentation/mm/x.rst"}, used));
  CHECK_FALSE(kbuild::touches_build({"arch/arm64/mm/fault.c", "drivers/gpu/drm/i915/i915_drv.c"}, used));
  CHECK_FALSE(kbuild::touches_build({}, used));              // an empty commit
  CHECK(kbuild::touches_build({"Documentation/x.rst"}, {})); // nothing known: keep it
}
