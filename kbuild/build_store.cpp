#include "kbuild/build_store.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <map>

namespace bisectd::kbuild {

namespace {

constexpr std::string_view k_result_file = "result";
constexpr std::string_view k_result_magic = "bisectd-build-result 1";

// Commits and recipe hashes become directory names: only [0-9A-Za-z] (no '/', no "..").
bool is_key_part(const std::string& text) {
  if (text.empty() || text.size() > 128) {
    return false;
  }
  for (char c : text) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum) {
      return false;
    }
  }
  return true;
}

Status check_key(const std::string& commit, const std::string& recipe_hash) {
  if (!is_key_part(commit)) {
    return make_error(ErrorCode::invalid_input, "build store: invalid commit '" + commit + "'");
  }
  if (!is_key_part(recipe_hash)) {
    return make_error(ErrorCode::invalid_input, "build store: invalid recipe hash '" + recipe_hash + "'");
  }
  return {};
}

// One line per value: the result file is line-oriented.
std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return out;
}

// `path` relative to `dir` when inside it, else as is.
std::string store_path(const std::filesystem::path& path, const std::filesystem::path& dir) {
  if (path.empty()) {
    return "";
  }
  auto rel = path.lexically_relative(dir);
  bool inside = !rel.empty() && *rel.begin() != "..";
  return one_line((inside ? rel : path).string());
}

std::filesystem::path load_path(const std::string& text, const std::filesystem::path& dir) {
  if (text.empty()) {
    return {};
  }
  std::filesystem::path path(text);
  return path.is_absolute() ? path : dir / path;
}

std::string render(const BuildResult& result, const std::filesystem::path& dir) {
  std::string text(k_result_magic);
  text += "\noutcome " + std::string(result.outcome == BuildOutcome::ok ? "ok" : "failed");
  text += "\nseconds " + std::to_string(result.seconds);
  text += "\nkernel_release " + one_line(result.kernel_release);
  text += "\nlog " + store_path(result.log_path, dir);
  text += "\nartifact_dir " + store_path(result.artifact_dir, dir);
  text += "\nmessage " + one_line(result.message);
  text += "\nfingerprint " + one_line(result.fingerprint);
  return text + "\n";
}

std::optional<BuildResult> parse(const std::string& text, const std::filesystem::path& dir) {
  auto lines = base::split_lines(text);
  if (lines.empty() || lines.front() != k_result_magic) {
    return std::nullopt;
  }
  std::map<std::string, std::string> fields;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto space = lines[i].find(' ');
    if (space != std::string::npos) {
      fields[lines[i].substr(0, space)] = lines[i].substr(space + 1);
    }
  }
  BuildResult result;
  const auto& outcome = fields["outcome"];
  if (outcome != "ok" && outcome != "failed") {
    return std::nullopt;
  }
  result.outcome = outcome == "ok" ? BuildOutcome::ok : BuildOutcome::failed;
  const auto& seconds = fields["seconds"];
  std::from_chars(seconds.data(), seconds.data() + seconds.size(), result.seconds);
  result.kernel_release = fields["kernel_release"];
  result.log_path = load_path(fields["log"], dir);
  result.artifact_dir = load_path(fields["artifact_dir"], dir);
  result.message = fields["message"];
  result.fingerprint = fields["fingerprint"]; // absent in results stored before fingerprints: unknown
  result.reused = true;
  return result;
}

} // namespace

BuildStore::BuildStore(std::filesystem::path root) : m_root(std::move(root)) {}

std::filesystem::path BuildStore::dir_for(const std::string& commit, const std::string& recipe_hash) const {
  return m_root / recipe_hash / commit;
}

std::optional<BuildResult> BuildStore::lookup(const std::string& commit, const std::string& recipe_hash) const {
  if (!check_key(commit, recipe_hash)) {
    return std::nullopt;
  }
  auto dir = dir_for(commit, recipe_hash);
  auto text = base::read_file(dir / k_result_file);
  if (!text) {
    return std::nullopt;
  }
  auto result = parse(*text, dir);
  if (!result) {
    spdlog::warn("build store: {}: corrupt result file, ignoring it", (dir / k_result_file).string());
  }
  return result;
}

Result<std::filesystem::path> BuildStore::prepare(const std::string& commit, const std::string& recipe_hash) {
  BISECTD_TRY(check_key(commit, recipe_hash));
  auto dir = dir_for(commit, recipe_hash);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) {
    return make_error(ErrorCode::io, dir.string() + ": cannot clear: " + ec.message());
  }
  BISECTD_TRY(base::make_dirs(dir));
  return dir;
}

Status BuildStore::save(const std::string& commit, const std::string& recipe_hash, const BuildResult& result) {
  BISECTD_TRY(check_key(commit, recipe_hash));
  if (result.outcome == BuildOutcome::infra) {
    return {};
  }
  auto dir = dir_for(commit, recipe_hash);
  BISECTD_TRY(base::make_dirs(dir));
  return base::write_file_atomic(dir / k_result_file, render(result, dir));
}

Status BuildStore::forget_failure(const std::string& commit, const std::string& recipe_hash) {
  BISECTD_TRY(check_key(commit, recipe_hash));
  auto stored = lookup(commit, recipe_hash);
  if (!stored || stored->outcome != BuildOutcome::failed) {
    return {};
  }
  auto file = dir_for(commit, recipe_hash) / k_result_file;
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (ec) {
    return make_error(ErrorCode::io, file.string() + ": cannot remove: " + ec.message());
  }
  return {};
}

} // namespace bisectd::kbuild
