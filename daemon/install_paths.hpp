#pragma once
// Where an installed bisectd finds what `cmake --install` put next to it: the configs (job-relative paths fall
// back to them) and the bench-core programs (the QEMU and LAVA labs' initramfs). A bisectd run from its build
// tree keeps using the source tree's configs/ and the build tree's bench-core/.

#include <filesystem>

namespace bisectd::daemon {

// PREFIX/share/bisectd/configs when this executable is PREFIX/bin/bisectd and that folder exists; else empty.
std::filesystem::path installed_configs_dir();

// PREFIX/libexec/bisectd/bench-core when it holds the programs; else empty.
std::filesystem::path installed_bench_core_dir();

} // namespace bisectd::daemon
