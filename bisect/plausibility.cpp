#include "bisect/plausibility.hpp"

#include <algorithm>
#include <cctype>

namespace bisectd::bisect {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string_view base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Copies a string or character literal starting at text[i] (the quote) into `out`; returns the index after it.
std::size_t copy_literal(std::string_view text, std::size_t i, std::string& out) {
  char quote = text[i];
  out += text[i++];
  while (i < text.size() && text[i] != quote && text[i] != '\n') {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[i++];
    }
    out += text[i++];
  }
  if (i < text.size()) {
    out += text[i++];
  }
  return i;
}

// Whether two characters separated by whitespace would form one token if the whitespace were dropped.
bool would_join(char a, char b) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto op = [](char c) { return std::string_view("+-&|<>=/*%!^.:#").find(c) != std::string_view::npos; };
  return (word(a) && word(b)) || (op(a) && op(b));
}

// Whether a hunk side opens inside a block comment: a "*/" comes before any "/*".
bool opens_in_comment(std::string_view text) {
  auto close = text.find("*/");
  return close != std::string_view::npos && close < text.find("/*");
}

} // namespace

std::string kernel_arch_dir(std::string_view build_arch) {
  if (build_arch == "x86_64" || build_arch == "i386" || build_arch == "x86") {
    return "x86";
  }
  if (build_arch == "aarch64") {
    return "arm64";
  }
  return std::string(build_arch);
}

PathKind classify_path(std::string_view path, std::string_view build_arch) {
  auto name = base_name(path);
  if (starts_with(path, "Documentation/") || ends_with(name, ".md") || ends_with(name, ".rst") ||
      (ends_with(name, ".txt") && name != "CMakeLists.txt")) {
    return PathKind::documentation;
  }
  if (starts_with(path, "tests/") || path.find("/tests/") != std::string_view::npos ||
      starts_with(path, "selftests/") || path.find("/selftests/") != std::string_view::npos) {
    return PathKind::test;
  }
  if (!build_arch.empty() && starts_with(path, "arch/")) {
    auto rest = path.substr(5);
    auto slash = rest.find('/');
    if (slash != std::string_view::npos && rest.substr(0, slash) != kernel_arch_dir(build_arch)) {
      return PathKind::other_arch;
    }
  }
  return PathKind::code;
}

bool is_c_like(std::string_view path) {
  for (auto ext : {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".dts", ".dtsi"}) {
    if (ends_with(path, ext)) {
      return true;
    }
  }
  return false;
}

std::string strip_c_comments(std::string_view text, bool starts_in_comment) {
  std::string out;
  std::size_t i = 0;
  if (starts_in_comment) {
    auto close = text.find("*/");
    i = close == std::string_view::npos ? text.size() : close + 2;
  }
  bool gap = false; // whitespace or a comment since the last kept character
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.size(), text.find('\n', i));
      gap = true;
    } else if (text.compare(i, 2, "/*") == 0) {
      auto close = text.find("*/", i + 2);
      i = close == std::string_view::npos ? text.size() : close + 2;
      gap = true;
    } else if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      gap = true;
    } else {
      if (gap && !out.empty() && would_join(out.back(), text[i])) {
        out += ' '; // "a - -b" must not become "a--b"
      }
      gap = false;
      if (text[i] == '"' || text[i] == '\'') {
        i = copy_literal(text, i, out);
      } else {
        out += text[i++];
      }
    }
  }
  return out;
}

std::vector<FileDiff> parse_patch(std::string_view patch) {
  std::vector<FileDiff> files;
  bool in_hunk = false;
  std::size_t pos = 0;
  while (pos < patch.size()) {
    auto end = std::min(patch.size(), patch.find('\n', pos));
    auto line = patch.substr(pos, end - pos);
    pos = end + 1;
    if (starts_with(line, "diff --git ")) {
      auto b = line.rfind(" b/");
      files.push_back(FileDiff{std::string(b == std::string_view::npos ? line : line.substr(b + 3)), false, {}});
      in_hunk = false;
    } else if (files.empty()) {
      continue; // the message and diffstat before the first file
    } else if (starts_with(line, "@@")) {
      files.back().hunks.emplace_back();
      in_hunk = true;
    } else if (starts_with(line, "Binary files") || starts_with(line, "GIT binary patch")) {
      files.back().binary = true;
    } else if (in_hunk && !line.empty() && line[0] != '\\') {
      auto& [old_side, new_side] = files.back().hunks.back();
      auto content = std::string(line.substr(1)) + "\n";
      old_side += line[0] == '+' ? "" : content;
      new_side += line[0] == '-' ? "" : content;
    }
  }
  return files;
}

bool hunks_comment_only(const FileDiff& diff) {
  if (diff.binary || !is_c_like(diff.path)) {
    return false;
  }
  for (const auto& [old_side, new_side] : diff.hunks) {
    bool old_open = opens_in_comment(old_side), new_open = opens_in_comment(new_side);
    if (old_open != new_open) {
      return false; // the sides disagree about where they start: do not guess
    }
    if (strip_c_comments(old_side, old_open) != strip_c_comments(new_side, new_open)) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> implausible_diff(const std::vector<FileDiff>& diffs, std::string_view build_arch) {
  std::string why;
  for (const auto& diff : diffs) {
    auto kind = classify_path(diff.path, build_arch);
    std::string what = kind == PathKind::documentation ? "documentation"
                       : kind == PathKind::test        ? "tests"
                       : kind == PathKind::other_arch  ? "another architecture"
                                                       : "only comments";
    if (kind == PathKind::code && !hunks_comment_only(diff)) {
      return std::nullopt;
    }
    why += (why.empty() ? "" : ", ") + what + " in " + diff.path;
  }
  return diffs.empty() ? std::nullopt : std::optional<std::string>(why);
}

} // namespace bisectd::bisect
