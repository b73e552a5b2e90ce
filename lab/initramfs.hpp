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

// The per-visit entries: bisectd/{argv,env,runs,timeout,proc} (proc: the /proc files of the run's monitors). Error (invalid_input): an empty command,
// an argument or env value with a newline or NUL, an invalid env name, or runs < 1.
Result<std::vector<CpioEntry>> job_entries(const RunSpec& run, int runs);

// gzip -n of `data` (through the gzip program).
Result<std::string> gzip_bytes(const std::string& data);

// The cached base image `<cache_dir>/initramfs-<content hash>.cpio.gz`, made when missing.
Result<std::filesystem::path> cached_base_image(const InitramfsInputs& inputs, const std::filesystem::path& cache_dir);

// The benchmark image of a visit, as the qemu and lava backends boot it: busybox (`busybox`) and the bench-core
// programs from `bench_dir` (the cached base image), then the visit's job archive, written to `dest`. Error
// (infra) when bench-core is not built there.
Status write_bench_image(const std::filesystem::path& busybox, const std::filesystem::path& bench_dir,
                         const std::filesystem::path& cache_dir, const std::vector<CpioEntry>& job,
                         const std::filesystem::path& dest);

// Writes the base image followed by the gzip'd job archive to `dest`.
Status write_visit_image(const std::filesystem::path& base_image, const std::vector<CpioEntry>& job,
                         const std::filesystem::path& dest);

} // namespace bisectd::lab
