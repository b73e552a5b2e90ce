#pragma once
// The QEMU lab's initramfs: a gzip'd newc cpio with busybox-static, the bench-core programs and an
// /init that mounts proc/sys/dev/tmp, prints the boot marker with `uname -r`, runs the job n times
// between markers (lab/console.hpp) and reboots (-no-reboot makes QEMU exit).
//
// The base image depends only on its inputs and is cached by their content hash. The job (argv, env,
// runs, timeout) travels as data in a second small gzip'd cpio appended per visit (the kernel unpacks
// concatenated archives): /bisectd/argv holds one argument per line and /init reads it with
// `read -r` into "$@" — never pasted into shell code.

#include "base/error.hpp"
#include "lab/machine.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::lab {

struct CpioEntry {
  enum class Kind { directory, file, symlink };
  std::string path; // inside the archive, without a leading '/': "bin/busybox"
  Kind kind = Kind::file;
  unsigned mode = 0644; // permission bits only
  std::string data;     // file content, or the symlink target
};

// A newc ("070701") cpio archive of `entries` plus the TRAILER!!! entry. Deterministic: uid/gid 0,
// mtime 0, inode numbers in order; headers and data padded to 4 bytes.
std::string make_cpio(const std::vector<CpioEntry>& entries);

// The /init script (busybox sh).
std::string init_script();

struct InitramfsInputs {
  std::filesystem::path busybox = "/bin/busybox"; // must be static
  std::vector<std::filesystem::path> programs;    // put into /usr/local/bin under their file names
};

// The entries of the base image: directories, /init, bin/busybox (+ bin/sh link) and the programs.
// Error: an input cannot be read.
Result<std::vector<CpioEntry>> base_entries(const InitramfsInputs& inputs);

// The per-visit entries: bisectd/{argv,env,runs,timeout,proc,perf} (proc: the /proc files of the run's monitors;
// perf, only when the job asks for perf: "stat" and/or "profile", one a line). Error (invalid_input): an empty command,
// an argument or env value with a newline or NUL, an invalid env name, or runs < 1.
Result<std::vector<CpioEntry>> job_entries(const RunSpec& run, int runs);

// The absolute paths in `ldd` output (the libraries' "=> /path" and the loader's own line), in order; vdso and
// "not found" lines give none.
std::vector<std::filesystem::path> parse_ldd(std::string_view output);

// The guest's perf: `perf` as usr/bin/perf, every shared library `ldd` finds for it and the dynamic loader at their
// host paths, and the directories they need. Error (infra): ldd fails, a library is missing or cannot be read.
Result<std::vector<CpioEntry>> perf_entries(const std::filesystem::path& perf);

// The cached perf archive `<cache_dir>/perf-<content hash>.cpio.gz`, made when missing. It is appended only to the
// images of jobs that ask for perf: it is about 10x the base image (Debian's perf links libpython and libperl).
Result<std::filesystem::path> cached_perf_image(const std::filesystem::path& perf, const std::filesystem::path& cache_dir);

// gzip -n of `data` (through the gzip program).
Result<std::string> gzip_bytes(const std::string& data);

// The cached base image `<cache_dir>/initramfs-<content hash>.cpio.gz`, made when missing.
Result<std::filesystem::path> cached_base_image(const InitramfsInputs& inputs, const std::filesystem::path& cache_dir);

// The benchmark image of a visit, as the qemu and lava backends boot it: busybox (`busybox`) and the bench-core
// programs from `bench_dir` (the cached base image), the perf archive when `perf` (the host's perf binary) is not
// empty, then the visit's job archive, written to `dest`. Error (infra) when bench-core is not built there; a perf
// that cannot be packed is only a warning (the guest then reports perf unavailable).
Status write_bench_image(const std::filesystem::path& busybox, const std::filesystem::path& bench_dir,
                         const std::filesystem::path& cache_dir, const std::vector<CpioEntry>& job,
                         const std::filesystem::path& dest, const std::filesystem::path& perf = {});

// Writes the base image, the perf image (when not empty) and the gzip'd job archive to `dest`.
Status write_visit_image(const std::filesystem::path& base_image, const std::vector<CpioEntry>& job,
                         const std::filesystem::path& dest, const std::filesystem::path& perf_image = {});

} // namespace bisectd::lab
