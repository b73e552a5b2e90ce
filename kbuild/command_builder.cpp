#include "kbuild/command_builder.hpp"

#include "base/fs.hpp"
#include "base/process.hpp"
#include "base/strings.hpp"
#include "kbuild/fingerprint.hpp"
#include "kbuild/kernel_failure.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>

namespace bisectd::kbuild {

namespace {

namespace fs = std::filesystem;

constexpr std::streamoff k_tail_bytes = 4096;
// The largest single artifact file copied into the store (base::copy_untrusted): a sparse or endless file the
// build left is refused before a byte is copied.
constexpr std::uintmax_t k_artifact_file_cap = 2ULL * 1024 * 1024 * 1024;

Status check_recipe(const Recipe& recipe) {
  if (recipe.kind != RecipeKind::command) {
    return make_error(ErrorCode::invalid_config, "build.recipe: the command builder needs recipe 'command'");
  }
  if (recipe.command.empty()) {
    return make_error(ErrorCode::invalid_config, "build.command: empty");
  }
  for (const auto& artifact : recipe.artifacts) {
    fs::path path(artifact);
    bool escapes = path.empty() || path.is_absolute() || path.lexically_normal().begin()->string() == "..";
    if (escapes) {
      return make_error(ErrorCode::invalid_config,
                        "build.artifacts: '" + artifact + "' must be a relative path inside the worktree");
    }
  }
  return {};
}

// The last non-empty line of the log (from its tail only: logs can be large), shortened.
std::string last_log_line(const fs::path& log) {
  std::ifstream in(log, std::ios::binary);
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::streamoff>(in.tellg());
  in.seekg(size > k_tail_bytes ? size - k_tail_bytes : 0);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto lines = base::split_lines(tail);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!base::trim(*it).empty()) {
      return failure_message_line(*it);
    }
  }
  return "";
}

// "12 KiB free of 98304 KiB on /path" when the file system holding `path` is (nearly) full; empty otherwise.
std::string full_disk(const fs::path& path) {
  std::error_code ec;
  auto space = fs::space(path, ec);
  if (ec || !disk_nearly_full(space.available, space.capacity)) {
    return "";
  }
  return std::to_string(space.available / 1024) + " KiB free of " + std::to_string(space.capacity / 1024) + " KiB on " +
         path.string();
}

// A relative argv[0] with a slash (./build.sh) means a file in the worktree, not in PATH.
base::Command make_command(const BuildRequest& request, const fs::path& log) {
  base::Command cmd;
  cmd.argv = request.recipe.command;
  if (cmd.argv[0].find('/') != std::string::npos && fs::path(cmd.argv[0]).is_relative()) {
    cmd.argv[0] = (request.worktree / cmd.argv[0]).lexically_normal().string();
  }
  cmd.env = request.recipe.env;
  cmd.cwd = request.worktree;
  cmd.timeout = request.recipe.timeout;
  cmd.stdout_path = log;
  cmd.stderr_to_stdout = true;
  cmd.append = true; // after the header line
  cmd.cancel = request.cancel;
  cmd.idle_priority = request.background;
  // The worktree's git dir stays read-only: the daemon's unsandboxed checkout reads it (vcs/worktree.cpp).
  cmd.sandbox = base::Sandbox{.writable = {request.worktree}, .readable = {}, .read_only = {request.worktree / ".git"}};
  return cmd;
}

// Runs the build command; sets outcome and message unless it exited 0.
Status run_command(const BuildRequest& request, BuildResult& result) {
  auto header = "# bisectd build of " + request.commit + ": " + base::describe_argv(request.recipe.command) + " (in " +
                request.worktree.string() + ")\n";
  BISECTD_TRY(base::write_file_atomic(result.log_path, header));
  auto cmd = make_command(request, result.log_path);
  spdlog::debug("build {}: running {} in {}", base::short_sha(request.commit), base::describe_argv(cmd.argv),
                request.worktree.string());
  auto status = base::run(cmd);
  if (!status) {
    result.outcome = BuildOutcome::infra;
    result.message = status.error().code == ErrorCode::cancelled ? "build cancelled" : status.error().message;
    return {};
  }
  result.seconds = std::chrono::duration<double>(status->duration).count();
  spdlog::debug("build {}: {} after {:.1f}s", base::short_sha(request.commit), status->describe(), result.seconds);
  if (status->timed_out || status->signal != 0) {
    result.outcome = BuildOutcome::infra;
    result.message = "build " + status->describe();
  } else if (auto full = status->code != 0 ? full_disk(request.worktree) : ""; !full.empty()) {
    result.outcome = BuildOutcome::infra;
    result.message = "build " + status->describe() + " with the disk full (" + full + ")";
  } else if (status->code != 0) {
    result.outcome = BuildOutcome::failed;
    auto last = last_log_line(result.log_path);
    result.message =
      last.empty() || base::starts_with(last, "# bisectd build of") ? "build " + status->describe() : last;
  }
  return {};
}

// Copies one entry of the worktree as the build left it, following no link: a directory is made, a symlink is copied
// as a symlink (its target is never read), a regular file within the cap is copied (base::copy_untrusted); anything
// else (a fifo, a device, a file over the cap) is refused, naming the path.
Status copy_entry(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  auto status = fs::symlink_status(from, ec);
  if (fs::is_directory(status)) {
    return base::make_dirs(to);
  }
  if (fs::is_symlink(status)) {
    fs::copy_symlink(from, to, ec);
    return ec ? make_error(ErrorCode::io, to.string() + ": " + ec.message()) : Status{};
  }
  return base::copy_untrusted(from, to, k_artifact_file_cap);
}

// Copies a directory artifact entry by entry (the iterator does not descend into linked directories).
Status copy_tree(const fs::path& from, const fs::path& to) {
  BISECTD_TRY(copy_entry(from, to));
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    BISECTD_TRY(copy_entry(it->path(), to / it->path().lexically_relative(from)));
  }
  if (ec) {
    return make_error(ErrorCode::io, from.string() + ": " + ec.message());
  }
  return {};
}

// Copies one artifact (file or directory) from the worktree into `into`, keeping its relative path.
Status copy_artifact(const fs::path& worktree, const std::string& artifact, const fs::path& into, BuildResult& result) {
  auto from = worktree / artifact;
  std::error_code ec;
  auto status = fs::symlink_status(from, ec);
  if (!fs::exists(status)) {
    result.outcome = BuildOutcome::failed;
    result.message = "artifact '" + artifact + "' missing after the build";
    return {};
  }
  auto to = into / fs::path(artifact).lexically_normal();
  BISECTD_TRY(base::make_dirs(to.parent_path()));
  auto copied = fs::is_directory(status) ? copy_tree(from, to) : copy_entry(from, to);
  if (!copied) {
    // A refused entry is what this commit's build made (a link, a fifo, a huge file): it fails; the rest is ours.
    result.outcome = copied.error().code == ErrorCode::invalid_input ? BuildOutcome::failed : BuildOutcome::infra;
    result.message = "artifact '" + artifact + "': " + copied.error().message;
  }
  return {};
}

// Copies every declared artifact; the first missing or uncopyable one decides the outcome.
Status collect_artifacts(const BuildRequest& request, const fs::path& dir, BuildResult& result) {
  auto into = dir / "artifacts";
  BISECTD_TRY(base::make_dirs(into));
  for (const auto& artifact : request.recipe.artifacts) {
    BISECTD_TRY(copy_artifact(request.worktree, artifact, into, result));
    if (result.outcome != BuildOutcome::ok) {
      std::error_code ec;
      fs::remove_all(into, ec);
      return {};
    }
  }
  result.artifact_dir = into;
  auto fingerprint = artifacts_fingerprint(into, request.recipe.artifacts);
  if (!fingerprint) {
    spdlog::warn("build {}: no fingerprint: {}", base::short_sha(request.commit), fingerprint.error().message);
  }
  result.fingerprint = fingerprint.value_or("");
  return {};
}

} // namespace

bool disk_nearly_full(std::uintmax_t available, std::uintmax_t capacity) {
  constexpr std::uintmax_t k_floor = 64ULL * 1024 * 1024;
  return available < std::min(k_floor, capacity / 100);
}

CommandBuilder::CommandBuilder(BuildStore& store) : m_store(store) {}

Result<BuildResult> CommandBuilder::build(const BuildRequest& request) {
  BISECTD_TRY(check_recipe(request.recipe));
  BISECTD_TRY_ASSIGN(auto recipe_hash, request.recipe.hash());
  if (auto stored = m_store.lookup(request.commit, recipe_hash)) {
    stored->reused = true;
    stored->seconds = 0;
    return *stored;
  }
  // Each step below says why it may stop: an infra or failed outcome ends the build early.
  BISECTD_TRY_ASSIGN(auto dir, m_store.prepare(request.commit, recipe_hash));
  BuildResult result;
  result.log_path = dir / "build.log";
  auto context = "build " + base::short_sha(request.commit);
  if (auto ran = run_command(request, result); !ran) {
    return std::unexpected(ran.error().context(context));
  }
  if (result.outcome == BuildOutcome::ok) {
    if (auto collected = collect_artifacts(request, dir, result); !collected) {
      return std::unexpected(collected.error().context(context));
    }
  }
  if (result.outcome != BuildOutcome::infra) {
    if (auto saved = m_store.save(request.commit, recipe_hash, result); !saved) {
      return std::unexpected(saved.error().context(context));
    }
  }
  return result;
}

} // namespace bisectd::kbuild
