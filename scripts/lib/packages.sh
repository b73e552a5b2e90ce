# Debian 12 packages bisectd needs, and a helper that installs the missing ones (apt-get update once).
# Sourced by scripts/test and scripts/demo.

BUILD_PACKAGES=(build-essential cmake ninja-build pkg-config git libgit2-dev libboost-dev libspdlog-dev libfmt-dev
  libyaml-cpp-dev libsqlite3-dev libcli11-dev nlohmann-json3-dev libcurl4-openssl-dev catch2 python3 bubblewrap)
TEST_PACKAGES=(python3-aiosmtpd sqlite3 ccache openssh-server openssh-client man-db groff-base zsh)
KERNEL_PACKAGES=(linux-source-6.1 qemu-system-x86 busybox-static ccache bc flex bison libelf-dev libssl-dev cpio
  xz-utils kmod perl dropbear-bin kexec-tools openssh-sftp-server linux-perf)
# The libFuzzer targets (scripts/fuzz): clang 16 and its libFuzzer runtime. Not Debian 12's default clang 14: its
# libstdc++ <expected> needs C++20 concepts that clang 14 lacks (std::expected is everywhere here).
# lld links the instrumented executables in a quarter of GNU ld's time (bisectd: 2.0 s vs 8.9 s).
FUZZ_PACKAGES=(clang-16 libclang-rt-16-dev lld-16)
# The build scripts/test and scripts/fuzz share: clang 16, every library instrumented for libFuzzer's coverage with
# AddressSanitizer and UndefinedBehaviorSanitizer (cmake/ProjSettings.cmake's BISECTD_FUZZ), the fuzz targets linked
# with libFuzzer.
FUZZ_BUILD_OPTIONS=(-DBISECTD_FUZZ=ON -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16
  -DCMAKE_EXE_LINKER_FLAGS=--ld-path=/usr/lib/llvm-16/bin/ld.lld)
# Installed only by the lava stage (tests/lava): a real LAVA server and dispatcher on this host (about 5 minutes).
LAVA_PACKAGES=(postgresql lava-server lava-dispatcher)

# install_packages PKG...: installs those not yet installed; needs root (or sudo) when something is missing.
install_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "installing: ${missing[*]}" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# build_bisectd DIR [CMAKE_OPTION...] [-- TARGET...]: configures and builds the project into DIR (optimised, with
# debug info), all targets or the ones after "--". ccache is used when installed.
build_bisectd() {
  local dir=$1
  shift
  local options=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do options+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  configure_bisectd "$dir" "${options[@]}"
  compile_bisectd "$dir" "$@"
}

# configure_bisectd DIR [CMAKE_OPTION...]: the configure half of build_bisectd.
configure_bisectd() {
  local dir=$1
  shift
  local options=("$@")
  command -v ccache >/dev/null && options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${options[@]}" >/dev/null
}

# compile_bisectd DIR [TARGET...]: the build half: all targets, or the ones named. ccache sees paths under the
# checkout as relative ones and leaves the working directory out of its hash, so a clone in another folder (every CI
# run) hits what an earlier clone compiled.
compile_bisectd() {
  local dir=$1
  shift
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  CCACHE_BASEDIR=$(pwd -P) CCACHE_NOHASHDIR=true cmake --build "$dir" -j"$(nproc)" "${targets[@]}"
}
