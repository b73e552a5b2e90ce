#pragma once
// Binary fingerprints of builds: two commits whose builds have the same fingerprint produce the same binary
// (apart from the version stamp), so a bisection lets one share the other's samples (bisect::Candidate::same_as).
// Fingerprints are SHA-256 hex digests; an empty fingerprint means "unknown" (builds stored before they existed).

#include "base/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::kbuild {

// SHA-256 of `data` as 64 lowercase hex digits (FIPS 180-4).
std::string sha256_hex(std::string_view data);

// The fingerprint of a kernel image (vmlinux): SHA-256 of its bytes after every occurrence of each `stamps`
// string (the kernel release, the localversion; in any order) is replaced by a same-length placeholder and
// every GNU build-id note's descriptor is zeroed (the linker computes it over the stamped bytes). Streams the
// file (vmlinux with debug info is hundreds of MB). Errors: the file cannot be read (naming it), or an empty stamp.
Result<std::string> kernel_fingerprint(const std::filesystem::path& image, std::vector<std::string> stamps);

// The fingerprint of a tree installed for one kernel release (the modules under lib/modules/<release>/): SHA-256
// over every entry in sorted order: its relative path with the stamps masked, a regular file's kernel_fingerprint,
// a symlink's target. Errors: an unreadable entry (naming it), or an empty stamp.
Result<std::string> tree_fingerprint(const std::filesystem::path& dir, std::vector<std::string> stamps);

// The fingerprint of a `command` build: SHA-256 over the declared artifacts' relative names and contents (a
// directory artifact: every regular file and symlink under it, in sorted order), in the given order. No
// stripping: a command recipe has no version stamp we know of. Error: an artifact is missing (naming its path).
Result<std::string> artifacts_fingerprint(const std::filesystem::path& dir, const std::vector<std::string>& artifacts);

} // namespace bisectd::kbuild
