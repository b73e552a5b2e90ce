#pragma once
// Plausibility of a culprit: which changed paths cannot affect a benchmark (documentation, tests, another
// architecture) and whether a C-like change only touches comments. Pure; every rule is unit-tested.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::bisect {

enum class PathKind {
  code,          // may change the build: must be looked at
  documentation, // Documentation/, *.md, *.txt (not CMakeLists.txt), *.rst
  test,          // tests/, selftests/
  other_arch,    // arch/<x>/ with x not the build's architecture (kernel recipes only)
};

// Classifies a changed path. `build_arch` is the kernel recipe's arch ("x86_64", "arm64"), or empty for
// non-kernel recipes (then arch/ is ordinary code).
PathKind classify_path(std::string_view path, std::string_view build_arch);

// The arch/ directory name of a kernel build arch ("x86_64" and "i386" → "x86", "aarch64" → "arm64").
std::string kernel_arch_dir(std::string_view build_arch);

// True for files whose comments are // and /* */ (C, C++, headers, .dts/.dtsi).
bool is_c_like(std::string_view path);

// `text` without // and /* */ comments and without any whitespace; string and character literals are kept.
// `starts_in_comment`: the text begins inside a block comment (a diff hunk cut out of one).
std::string strip_c_comments(std::string_view text, bool starts_in_comment = false);

// A file's change as seen in a unified diff: for each hunk, the old side (context + removed lines) and the
// new side (context + added lines).
struct FileDiff {
  std::string path;
  bool binary = false;
  std::vector<std::pair<std::string, std::string>> hunks;
};

// Splits `git format-patch`-like text (Repository::patch) into per-file diffs.
std::vector<FileDiff> parse_patch(std::string_view patch);

// True when every hunk's old and new side are equal once comments and whitespace are stripped. A hunk
// that opens with a "*/" before any "/*" is taken to start inside a block comment (when both sides agree).
// Conservative: anything unexpected counts as a code change.
bool hunks_comment_only(const FileDiff& diff);

// Why a diff cannot explain a performance shift ("only comments in a.c; documentation: README.md"), or
// nullopt when some path may change the build.
std::optional<std::string> implausible_diff(const std::vector<FileDiff>& diffs, std::string_view build_arch);

} // namespace bisectd::bisect
