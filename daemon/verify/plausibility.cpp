// Plausibility: can the culprit's change explain a performance shift at all?
// Two independent tests. (1) Its diff against the first parent: only documentation, tests, another
// architecture or comments (C-like files, compared hunk by hunk with comments and whitespace stripped).
// (2) Its build artifacts against the parent's, byte-wise, for command recipes. Kernel recipes are not
// compared: the stored bzImage is compressed and carries the version stamp (LOCALVERSION=-g<sha>), and
// System.map only lists symbol addresses, so an equal System.map cannot prove equal code (a changed
// constant moves nothing); a false "identical" would hide a real culprit, so it is left to test (1).
#include "bisect/plausibility.hpp"

#include "base/fs.hpp"
#include "daemon/verify/steps.hpp"

#include <filesystem>
#include <map>

namespace bisectd::daemon::verify {

namespace {

namespace fs = std::filesystem;

// Relative path → size of every regular file under `dir`.
Result<std::map<std::string, std::uintmax_t>> list_files(const fs::path& dir) {
  std::map<std::string, std::uintmax_t> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && !it->is_symlink()) {
      files[fs::relative(it->path(), dir).string()] = it->file_size();
    }
  }
  if (ec) {
    return make_error(ErrorCode::io, "build artifacts " + dir.string() + ": " + ec.message());
  }
  return files;
}

// Byte-wise equality of two artifact trees; contents are read only when names and sizes all match.
Result<bool> same_files(const fs::path& a, const fs::path& b) {
  BISECTD_TRY_ASSIGN(auto files_a, list_files(a));
  BISECTD_TRY_ASSIGN(auto files_b, list_files(b));
  if (files_a.empty() || files_a != files_b) {
    return false;
  }
  for (const auto& [name, size] : files_a) {
    // Artifacts are what a build made: read as hostile, within the cap the command builder copies them with.
    constexpr std::uintmax_t k_cap = 2ULL * 1024 * 1024 * 1024;
    BISECTD_TRY_ASSIGN(auto text_a, base::read_untrusted(a / name, k_cap));
    BISECTD_TRY_ASSIGN(auto text_b, base::read_untrusted(b / name, k_cap));
    if (text_a != text_b) {
      return false;
    }
  }
  return true;
}

// True/false when both stored builds exist and can be compared; nullopt when they cannot (kernel recipe,
// a build missing or failed).
Result<std::optional<bool>> artifacts_identical(VerifyTarget& t) {
  if (t.job.build.kind != kbuild::RecipeKind::command) {
    return std::optional<bool>();
  }
  auto culprit = t.deps.builds.stored(t.job, t.culprit);
  auto parent = t.deps.builds.stored(t.job, t.parent);
  if (!culprit || !parent || culprit->outcome != kbuild::BuildOutcome::ok ||
      parent->outcome != kbuild::BuildOutcome::ok) {
    return std::optional<bool>();
  }
  BISECTD_TRY_ASSIGN(bool same, same_files(culprit->artifact_dir, parent->artifact_dir));
  return std::optional<bool>(same);
}

} // namespace

Result<StepState> check_plausibility(VerifyTarget& t, Verification& v) {
  if (!t.job.verify.plausibility) {
    return StepState::done;
  }
  std::string patch;
  BISECTD_TRY(t.deps.repos.with_repo(t.b.tree, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(patch, repo.patch(t.culprit));
    return {};
  }));
  auto arch = t.job.build.kind == kbuild::RecipeKind::kernel ? t.job.build.arch : std::string();
  auto diffs = bisect::parse_patch(patch);
  auto diff_reason = bisect::implausible_diff(diffs, arch);
  BISECTD_TRY_ASSIGN(auto identical, artifacts_identical(t));
  std::string line;
  if (diff_reason) {
    line = "plausibility: the change touches " + *diff_reason + ": it cannot explain a performance shift";
  } else if (identical.value_or(false)) {
    line = "plausibility: the build artifacts are byte-identical to the parent's: it cannot explain a "
           "performance shift";
  } else {
    line = std::string("plausibility: the change touches code") +
           (identical ? " and the build differs from the parent's" : "");
  }
  v.implausible = diff_reason.has_value() || identical.value_or(false);
  record_step(v, "plausibility", line,
              {{"implausible", v.implausible},
               {"files", diffs.size()},
               {"diff_only_comments_docs_tests", diff_reason.has_value()},
               {"artifacts_identical", identical ? nlohmann::json(*identical) : nlohmann::json()}});
  return StepState::done;
}

} // namespace bisectd::daemon::verify
