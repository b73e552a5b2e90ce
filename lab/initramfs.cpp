// Initramfs generation for the QEMU backend (see initramfs.hpp).

#include "lab/initramfs.hpp"

#include "base/fs.hpp"
#include "base/hash.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "lab/run_blocks.hpp"
#include "monitors/monitors.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <iterator>
#include <set>
#include <cctype>
#include <cstdio>

namespace bisectd::lab {

namespace {

namespace fs = std::filesystem;

constexpr unsigned k_type_directory = 0040000;
constexpr unsigned k_type_file = 0100000;
constexpr unsigned k_type_symlink = 0120000;

void pad4(std::string& out) {
  while (out.size() % 4 != 0) {
    out += '\0';
  }
}

// One newc header + name + data.
void append_entry(std::string& out, unsigned inode, unsigned mode, unsigned nlink, const std::string& name,
                  const std::string& data) {
  char header[111];
  std::snprintf(header, sizeof header, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", inode, mode, 0U,
                0U, nlink, 0U, static_cast<unsigned>(data.size()), 0U, 0U, 0U, 0U,
                static_cast<unsigned>(name.size() + 1), 0U);
  out.append(header, 110);
  out += name;
  out += '\0';
  pad4(out);
  out += data;
  pad4(out);
}

unsigned type_bits(CpioEntry::Kind kind) {
  switch (kind) {
  case CpioEntry::Kind::directory: return k_type_directory;
  case CpioEntry::Kind::symlink: return k_type_symlink;
  case CpioEntry::Kind::file: break;
  }
  return k_type_file;
}

Result<CpioEntry> file_entry(const fs::path& from, std::string path, unsigned mode) {
  BISECTD_TRY_ASSIGN(auto data, base::read_file(from));
  return CpioEntry{std::move(path), CpioEntry::Kind::file, mode, std::move(data)};
}

bool is_env_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

bool has_line_break(const std::string& text) {
  return text.find('\n') != std::string::npos || text.find('\r') != std::string::npos ||
         text.find('\0') != std::string::npos;
}

} // namespace

std::string make_cpio(const std::vector<CpioEntry>& entries) {
  std::string out;
  unsigned inode = 1;
  for (const auto& entry : entries) {
    unsigned nlink = entry.kind == CpioEntry::Kind::directory ? 2 : 1;
    append_entry(out, inode++, type_bits(entry.kind) | (entry.mode & 07777), nlink, entry.path, entry.data);
  }
  append_entry(out, 0, 0, 1, "TRAILER!!!", "");
  return out;
}

std::string init_script() {
  // Job data is read with `read -r` into "$@" / export "NAME=value": it is never evaluated as code.
  return R"INIT(#!/bin/sh
# bisectd initramfs /init (lab/initramfs.cpp): mount, announce, run the job n times, reboot.
/bin/busybox --install -s
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
echo "BISECTD-BOOT release=$(uname -r)"
set --
while IFS= read -r arg; do set -- "$@" "$arg"; done < /bisectd/argv
while IFS= read -r assignment; do export "$assignment"; done < /bisectd/env
runs=$(cat /bisectd/runs)
limit=$(cat /bisectd/timeout)
# The /proc files the job's monitors read (names from bisectd, one a line), printed whole between markers
# (lab/run_blocks.hpp) outside the timed part of a run; a file this kernel lacks prints nothing.
)INIT" + std::string(proc_block_function()) + "\n" + std::string(perf_block_functions()) +
         R"INIT(
snapshot() {
  while IFS= read -r file; do bisectd_proc "$1" "$file"; done < /bisectd/proc
}
# perf around each run when the job asks (/bisectd/perf: "stat", "profile", one a line; perf and its libraries
# come in their own archive then), tried once before the runs (lab/run_blocks.hpp).
bisectd_perf_try /tmp $(cat /bisectd/perf 2>/dev/null)
cd /tmp
i=0
while [ "$i" -lt "$runs" ]; do
  echo "BISECTD-RUN-BEGIN $i"
  snapshot before
  start=$(cut -d' ' -f1 /proc/uptime)
  # This shell's own /proc/self/stat right around the benchmark, its only child in between: the `time` monitor's
  # user and system time and page faults (cutime, cstime, cminflt, cmajflt), as on an ssh box.
  read -r stat_before </proc/self/stat
  bisectd_perf_run /tmp timeout -s KILL "$limit" "$@"
  rc=$?
  read -r stat_after </proc/self/stat
  end=$(cut -d' ' -f1 /proc/uptime)
  echo
  snapshot after
  echo "BISECTD-STAT before $stat_before"
  echo "BISECTD-STAT after $stat_after"
  bisectd_perf_blocks /tmp
  echo "BISECTD-RUN-END $i rc=$rc start=$start end=$end"
  i=$((i + 1))
done
echo "BISECTD-DONE"
sync
reboot -f
)INIT";
}

Result<std::vector<CpioEntry>> base_entries(const InitramfsInputs& inputs) {
  using Kind = CpioEntry::Kind;
  std::vector<CpioEntry> entries;
  for (const char* dir : {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "usr/local", "usr/local/bin", "proc", "sys",
                          "dev", "tmp", "root", "bisectd"}) {
    entries.push_back({dir, Kind::directory, 0755, ""});
  }
  entries.push_back({"init", Kind::file, 0755, init_script()});
  BISECTD_TRY_ASSIGN(auto busybox, file_entry(inputs.busybox, "bin/busybox", 0755));
  entries.push_back(std::move(busybox));
  entries.push_back({"bin/sh", Kind::symlink, 0777, "busybox"});
  for (const auto& program : inputs.programs) {
    BISECTD_TRY_ASSIGN(auto entry, file_entry(program, "usr/local/bin/" + program.filename().string(), 0755));
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::vector<CpioEntry>> job_entries(const RunSpec& run, int runs) {
  if (run.command.empty()) {
    return make_error(ErrorCode::invalid_input, "run.command: empty");
  }
  if (runs < 1) {
    return make_error(ErrorCode::invalid_input, "runs: must be at least 1");
  }
  std::string argv;
  for (const auto& arg : run.command) {
    if (has_line_break(arg)) {
      return make_error(ErrorCode::invalid_input, "run.command: an argument has a line break or NUL");
    }
    argv += arg + "\n";
  }
  std::string env;
  for (const auto& [name, value] : run.env) {
    if (!is_env_name(name) || has_line_break(value)) {
      return make_error(ErrorCode::invalid_input, "run.env: invalid variable '" + name + "'");
    }
    env += name + "=" + value + "\n";
  }
  auto timeout = std::to_string(std::max<long long>(1, run.timeout.count()));
  std::string proc;
  for (const auto& file : monitors::proc_files(run.monitors)) {
    proc += file + "\n";
  }
  using Kind = CpioEntry::Kind;
  std::vector<CpioEntry> entries{{"bisectd/argv", Kind::file, 0644, argv},
                                 {"bisectd/env", Kind::file, 0644, env},
                                 {"bisectd/runs", Kind::file, 0644, std::to_string(runs) + "\n"},
                                 {"bisectd/timeout", Kind::file, 0644, timeout + "\n"},
                                 {"bisectd/proc", Kind::file, 0644, proc}};
  if (run.perf.any()) { // no file: /init runs no perf
    std::string perf = std::string(run.perf.stat ? "stat\n" : "") + (run.perf.profile ? "profile\n" : "");
    entries.push_back({"bisectd/perf", Kind::file, 0644, perf});
  }
  return entries;
}

std::vector<fs::path> parse_ldd(std::string_view output) {
  std::vector<fs::path> out;
  for (const auto& raw : base::split_lines(output)) {
    auto line = base::trim(raw);
    auto arrow = line.find("=>");
    auto path = base::trim(arrow == std::string_view::npos ? line : line.substr(arrow + 2));
    path = path.substr(0, path.find(" ("));
    if (path.starts_with('/')) {
      out.emplace_back(path);
    }
  }
  return out;
}

Result<std::vector<CpioEntry>> perf_entries(const fs::path& perf) {
  base::Command ldd;
  ldd.argv = {"ldd", perf.string()};
  BISECTD_TRY_ASSIGN(auto status, base::run_checked(ldd, ErrorCode::infra));
  if (status.out.find("not found") != std::string::npos) {
    return make_error(ErrorCode::infra, "perf " + perf.string() + ": a library is missing: " +
                                          base::join(base::split_lines(status.out), "; "));
  }
  using Kind = CpioEntry::Kind;
  std::vector<CpioEntry> entries;
  std::set<std::string> dirs{"usr", "usr/bin"};
  for (const auto& lib : parse_ldd(status.out)) {
    // Each library at its host path, so that the loader finds it where ldd did (its default multiarch dirs).
    auto inside = lib.relative_path();
    for (auto dir = inside.parent_path(); !dir.empty(); dir = dir.parent_path()) {
      dirs.insert(dir.generic_string());
    }
    BISECTD_TRY_ASSIGN(auto entry, file_entry(lib, inside.generic_string(), 0755));
    entries.push_back(std::move(entry));
  }
  BISECTD_TRY_ASSIGN(auto binary, file_entry(perf, "usr/bin/perf", 0755));
  entries.push_back(std::move(binary));
  std::vector<CpioEntry> out;
  for (const auto& dir : dirs) { // std::set orders a parent before its children
    out.push_back({dir, Kind::directory, 0755, ""});
  }
  std::move(entries.begin(), entries.end(), std::back_inserter(out));
  return out;
}

Result<std::string> gzip_bytes(const std::string& data) {
  base::Command cmd;
  cmd.argv = {"gzip", "-n", "-6", "-c"};
  cmd.stdin_data = data;
  cmd.capture_limit = 1024 * 1024 * 1024;
  BISECTD_TRY_ASSIGN(auto status, base::run_checked(cmd, ErrorCode::infra));
  return std::move(status.out);
}

// The gzip'd archive of `entries` under `cache_dir`, named `<prefix>-<hash of its content>.cpio.gz`: written once,
// then found by name.
static Result<fs::path> cached_image(const std::vector<CpioEntry>& entries, const fs::path& cache_dir,
                                     const std::string& prefix) {
  auto cpio = make_cpio(entries);
  auto path = cache_dir / (prefix + "-" + base::hash_hex(cpio) + ".cpio.gz");
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    return path;
  }
  BISECTD_TRY(base::make_dirs(cache_dir));
  BISECTD_TRY_ASSIGN(auto packed, gzip_bytes(cpio));
  BISECTD_TRY(base::write_file_atomic(path, packed));
  spdlog::info("initramfs: new archive {} ({} entries, {} bytes, {} unpacked)", path.string(), entries.size(),
               packed.size(), cpio.size());
  return path;
}

Result<fs::path> cached_base_image(const InitramfsInputs& inputs, const fs::path& cache_dir) {
  BISECTD_TRY_ASSIGN(auto entries, base_entries(inputs));
  return cached_image(entries, cache_dir, "initramfs");
}

Result<fs::path> cached_perf_image(const fs::path& perf, const fs::path& cache_dir) {
  BISECTD_TRY_ASSIGN(auto entries, perf_entries(perf));
  return cached_image(entries, cache_dir, "perf");
}

Status write_visit_image(const fs::path& base_image, const std::vector<CpioEntry>& job, const fs::path& dest,
                         const fs::path& perf_image) {
  BISECTD_TRY_ASSIGN(auto image, base::read_file(base_image));
  if (!perf_image.empty()) {
    BISECTD_TRY_ASSIGN(auto perf, base::read_file(perf_image));
    image += perf;
  }
  BISECTD_TRY_ASSIGN(auto packed, gzip_bytes(make_cpio(job)));
  return base::write_file_atomic(dest, image + packed);
}

Status write_bench_image(const std::filesystem::path& busybox, const std::filesystem::path& bench_dir,
                         const std::filesystem::path& cache_dir, const std::vector<CpioEntry>& job,
                         const std::filesystem::path& dest, const std::filesystem::path& perf) {
  static constexpr std::array<std::string_view, 4> k_bench_programs{"syscall", "page_fault", "pipe", "mmap"};
  InitramfsInputs inputs;
  inputs.busybox = busybox;
  for (auto name : k_bench_programs) {
    inputs.programs.push_back(bench_dir / name);
  }
  std::error_code ec;
  if (bench_dir.empty() || !std::filesystem::is_regular_file(inputs.programs.front(), ec)) {
    return make_error(ErrorCode::infra, "bench-core programs not found (build target bench_core, or set "
                                        "settings.bench_dir or BISECTD_BENCH_CORE_DIR)");
  }
  BISECTD_TRY_ASSIGN(auto base_image, cached_base_image(inputs, cache_dir));
  fs::path perf_image;
  if (!perf.empty()) {
    // Without perf the runs still measure: the guest says perf is unavailable and its metrics stay absent.
    if (auto image = cached_perf_image(perf, cache_dir)) {
      perf_image = *image;
    } else {
      spdlog::warn("initramfs: no perf in the guest: {}", image.error().message);
    }
  }
  return write_visit_image(base_image, job, dest, perf_image);
}

} // namespace bisectd::lab
