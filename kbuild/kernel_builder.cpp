// KernelBuilder: the `kernel` recipe, step by step (see kernel_builder.hpp for the sequence).

#include "kbuild/kernel_builder.hpp"

#include "base/fd.hpp"
#include "base/fs.hpp"
#include "base/hash.hpp"
#include "base/strings.hpp"
#include "kbuild/fingerprint.hpp"
#include "kbuild/kernel_failure.hpp"
#include "kbuild/kernel_make.hpp"
#include "kbuild/relevance.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <thread>
#include <utility>

namespace bisectd::kbuild {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_srctree_marker = ".bisectd-srctree";
constexpr std::string_view k_reference_config = ".bisectd-reference.config";

// Everything in the build dir was written by the commit's own build (in the sandbox), so the daemon reads it as
// hostile: without following links, regular files only, within these caps (base::read_untrusted). A real .config
// is under 300 KB, System.map under 10 MB, a bzImage under 30 MB; the build log is the daemon's own file but make
// fills it.
constexpr std::uintmax_t k_marker_cap = 64 * 1024;
constexpr std::uintmax_t k_config_cap = 16 * 1024 * 1024;
constexpr std::uintmax_t k_artifact_cap = 512 * 1024 * 1024;
constexpr std::uintmax_t k_log_cap = 64 * 1024 * 1024;

// An exclusive flock on `<build dir>.lock`: one build at a time per build dir, across processes too.
class BuildDirLock {
public:
  static Result<BuildDirLock> acquire(const fs::path& path) {
    base::Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid() || ::flock(fd.get(), LOCK_EX) != 0) {
      return make_error(ErrorCode::io, path.string() + ": cannot lock the build dir");
    }
    return BuildDirLock(std::move(fd));
  }

private:
  explicit BuildDirLock(base::Fd fd) : m_fd(std::move(fd)) {}
  base::Fd m_fd; // closing it releases the lock
};

// How a step ended when it did not fail with an Error: ok, or the outcome to stop the build with.
struct Step {
  BuildOutcome outcome = BuildOutcome::ok;
  std::string message;
};

Status check_request(const BuildRequest& request) {
  if (request.recipe.kind != RecipeKind::kernel) {
    return make_error(ErrorCode::invalid_config, "build.recipe: the kernel builder needs recipe 'kernel'");
  }
  if (!base::is_valid_name(request.tree)) {
    return make_error(ErrorCode::invalid_input, "build: invalid tree name '" + request.tree + "'");
  }
  if (request.recipe.config.empty()) {
    return make_error(ErrorCode::invalid_config, "build.config: empty (a make target like tinyconfig, or a file)");
  }
  bool file = request.recipe.config.front() == '/';
  if (!file && !base::ends_with(request.recipe.config, "config")) {
    return make_error(ErrorCode::invalid_config,
                      "build.config: '" + request.recipe.config + "' is neither a *config make target nor a file");
  }
  std::error_code ec;
  if (!fs::is_regular_file(request.worktree / "Makefile", ec)) {
    return make_error(ErrorCode::invalid_input, "build: " + request.worktree.string() + " is not a kernel tree");
  }
  BISECTD_TRY(kernel_arch(request.recipe.arch));
  return {};
}

// kbuild records absolute source paths in the build dir, so a build dir serves one source tree (its
// name carries a hash of the path); should a dir meet another tree anyway, it is started afresh.
Status claim_objdir(const fs::path& objdir, const fs::path& srctree, const fs::path& log) {
  auto marker = objdir / k_srctree_marker;
  auto recorded = base::read_untrusted(marker, k_marker_cap);
  bool foreign = recorded ? *recorded != srctree.string() : recorded.error().code != ErrorCode::not_found;
  if (foreign) {
    auto why = recorded ? "was used for " + *recorded : recorded.error().message;
    BISECTD_TRY(base::append_file(log, "# build dir " + why + "; starting it afresh\n"));
    std::error_code ec;
    fs::remove_all(objdir, ec);
    if (ec) {
      return make_error(ErrorCode::io, objdir.string() + ": cannot remove: " + ec.message());
    }
  }
  BISECTD_TRY(base::make_dirs(objdir));
  return base::write_file_atomic(marker, srctree.string());
}

// Runs make; a failure becomes a Step with the first error line of the log.
Result<Step> make_step(const KernelMake& make, const std::vector<std::string>& targets, int jobs) {
  auto status = run_make(make, targets, jobs);
  if (!status) {
    if (status.error().code == ErrorCode::cancelled) {
      return Step{BuildOutcome::infra, "cancelled"};
    }
    return std::unexpected(status.error());
  }
  if (status->ok()) {
    return Step{};
  }
  // A log over the cap (or refused) only costs the detail: the failure is still told by make's status.
  auto log = base::read_untrusted(make.log, k_log_cap).value_or("");
  auto what = "make " + base::join(targets, " ") + ": ";
  auto outcome = classify_make_failure(*status, log);
  auto detail = status->timed_out ? "timed out" : first_error_line(log);
  return Step{outcome == BuildOutcome::ok ? BuildOutcome::failed : outcome, what + detail};
}

// olddefconfig, then the check that every wanted option survived it.
Result<Step> olddefconfig_checked(const KernelMake& make, const std::vector<KconfigOption>& wanted) {
  BISECTD_TRY_ASSIGN(auto step, make_step(make, {"olddefconfig"}, 0));
  if (step.outcome != BuildOutcome::ok) {
    return step;
  }
  BISECTD_TRY_ASSIGN(auto result, base::read_untrusted(make.objdir / ".config", k_config_cap));
  auto missing = missing_options(parse_config(result), wanted);
  if (!missing.empty()) {
    return make_error(ErrorCode::invalid_config,
                      "build.fragment: options lost by olddefconfig: " + base::join(missing, ", "));
  }
  return Step{};
}

// The build dir's first build makes its reference config: base config (make target or file) + wanted
// options + olddefconfig. Later builds start from that reference (the make target alone costs ~12 s a
// build) and only run olddefconfig, so every commit gets the reference adapted to its own Kconfig.
Result<Step> configure(const KernelMake& make, const Recipe& recipe, const std::vector<KconfigOption>& wanted) {
  auto config_path = make.objdir / ".config";
  auto reference_path = make.objdir / k_reference_config;
  auto reference = base::read_untrusted(reference_path, k_config_cap);
  if (!reference && reference.error().code != ErrorCode::not_found) {
    return std::unexpected(reference.error());
  }
  if (reference) {
    if (base::read_untrusted(config_path, k_config_cap).value_or("") != *reference) {
      BISECTD_TRY(base::write_file_atomic(config_path, *reference));
    }
    return olddefconfig_checked(make, wanted);
  }
  if (recipe.config.front() == '/') {
    BISECTD_TRY_ASSIGN(auto base_config, base::read_file(recipe.config));
    BISECTD_TRY(base::write_file_atomic(config_path, base_config));
  } else {
    BISECTD_TRY_ASSIGN(auto step, make_step(make, {recipe.config}, 0));
    if (step.outcome != BuildOutcome::ok) {
      return step;
    }
  }
  BISECTD_TRY_ASSIGN(auto current, base::read_untrusted(config_path, k_config_cap));
  BISECTD_TRY(base::write_file_atomic(config_path, merge_fragment(current, wanted)));
  BISECTD_TRY_ASSIGN(auto step, olddefconfig_checked(make, wanted));
  if (step.outcome == BuildOutcome::ok) {
    BISECTD_TRY_ASSIGN(auto result, base::read_untrusted(config_path, k_config_cap));
    BISECTD_TRY(base::write_file_atomic(reference_path, result));
  }
  return step;
}

// The fingerprint of the linked vmlinux (bzImage is compressed: its release stamp cannot be masked), taken from
// the build dir before the next build overwrites it. Empty (unknown) when it cannot be read: the build stays ok.
std::string vmlinux_fingerprint(const fs::path& objdir, const std::vector<std::string>& stamps) {
  auto started = std::chrono::steady_clock::now();
  auto fingerprint = kernel_fingerprint(objdir / "vmlinux", stamps);
  if (!fingerprint) {
    spdlog::warn("kbuild: no fingerprint: {}", fingerprint.error().message);
    return "";
  }
  spdlog::debug("kbuild: fingerprint of {} in {:.2f}s: {}", (objdir / "vmlinux").string(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), *fingerprint);
  return *fingerprint;
}

// Installs the modules into a staging dir and packs them as modules.tar.gz. Returns the fingerprint of the
// installed tree (modules change code that vmlinux does not show), empty when unknown.
Result<std::string> collect_modules(const KernelMake& make, const fs::path& artifacts,
                                    const std::vector<std::string>& stamps) {
  auto staging = artifacts / "modules.staging";
  std::error_code created;
  fs::create_directories(staging, created);
  auto install = make;
  install.writable.push_back(staging);
  BISECTD_TRY_ASSIGN(auto step, make_step(install, {"INSTALL_MOD_PATH=" + staging.string(), "modules_install"}, 0));
  if (step.outcome != BuildOutcome::ok) {
    return make_error(ErrorCode::infra, "kernel artifacts: " + step.message);
  }
  base::Command tar;
  tar.argv = {"tar", "-czf", (artifacts / "modules.tar.gz").string(), "-C", staging.string(), "."};
  tar.sandbox = base::Sandbox{.writable = {artifacts}, .readable = {}}; // the staging dir is the build's output
  BISECTD_TRY(base::run_checked(tar, ErrorCode::io));
  auto fingerprint = tree_fingerprint(staging, stamps);
  if (!fingerprint) {
    spdlog::warn("kbuild: no fingerprint of the modules: {}", fingerprint.error().message);
  }
  std::error_code ec;
  fs::remove_all(staging, ec);
  return fingerprint.value_or("");
}

// Copies the boot image, config and System.map (and a modules tarball) into the store's artifact dir, and sets
// `fingerprint` to the binary's (kbuild/fingerprint.hpp; empty when unknown) with the release stamps masked.
Status collect_artifacts(const KernelMake& make, const Recipe& recipe, const fs::path& artifacts,
                         const std::string& release, std::string& fingerprint) {
  BISECTD_TRY_ASSIGN(auto arch, kernel_arch(recipe.arch));
  BISECTD_TRY(base::make_dirs(artifacts));
  std::vector<std::pair<fs::path, std::string>> files{{make.objdir / arch.image_path, std::string(arch.image_target)},
                                                      {make.objdir / ".config", "config"},
                                                      {make.objdir / "System.map", "System.map"}};
  for (const auto& [from, name] : files) {
    BISECTD_TRY(base::copy_untrusted(from, artifacts / name, name == "config" ? k_config_cap : k_artifact_cap));
  }
  std::vector<std::string> stamps{make.localversion};
  if (!release.empty()) {
    stamps.push_back(release);
  }
  fingerprint = vmlinux_fingerprint(make.objdir, stamps);
  if (!recipe.modules) {
    return {};
  }
  BISECTD_TRY_ASSIGN(auto modules, collect_modules(make, artifacts, stamps));
  fingerprint = fingerprint.empty() || modules.empty() ? "" : sha256_hex(fingerprint + " modules " + modules);
  return {};
}

// The make settings of one build: ccache when installed (CCACHE_DIR under the bisectd cache dir).
KernelMake make_settings(const BuildRequest& request, const fs::path& srctree, const fs::path& objdir,
                         const fs::path& log, std::chrono::steady_clock::time_point started) {
  KernelMake make;
  make.worktree = srctree;
  make.objdir = objdir;
  make.arch = request.recipe.arch;
  make.localversion = "-g" + base::short_sha(request.commit, 12);
  make.kcflags = request.recipe.kcflags;
  make.env = request.recipe.env;
  if (base::find_program("ccache")) {
    make.compiler = "ccache gcc";
    make.env.merge(ccache_env(srctree, objdir, base::default_cache_dir()));
  }
  make.log = log;
  make.deadline = started + request.recipe.timeout;
  make.cancel = request.cancel;
  make.idle_priority = request.background;
  return make;
}

// Compiles the image (and modules) and reads the release the kernel will report.
Result<Step> compile(const KernelMake& make, const Recipe& recipe, std::string& release) {
  BISECTD_TRY_ASSIGN(auto arch, kernel_arch(recipe.arch));
  std::vector<std::string> targets{std::string(arch.image_target)};
  if (recipe.modules) {
    targets.emplace_back("modules");
  }
  int jobs = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  BISECTD_TRY_ASSIGN(auto step, make_step(make, targets, jobs));
  if (step.outcome == BuildOutcome::ok) {
    BISECTD_TRY_ASSIGN(release, make_query(make, "kernelrelease"));
  }
  return step;
}

// Keeps the list of sources this build compiled next to its artifacts, for the bisection's relevance prior.
Status record_used_sources(const fs::path& objdir, const fs::path& srctree, const fs::path& artifacts) {
  BISECTD_TRY_ASSIGN(auto used, scan_used_sources(objdir, srctree));
  std::string text;
  for (const auto& path : used) {
    text += path + "\n";
  }
  return base::write_file_atomic(artifacts / k_used_sources_file, text);
}

// A build dir file refused as hostile (base::read_untrusted: a symlink, not a regular file, over its cap) ends the
// build as infra with that one line, and the build dir is removed (remove_all follows no link): this commit's build
// may have planted it or an earlier one left it behind, so the retry starts afresh, and a commit that plants it
// every time is skipped once its attempts are used up. Nothing of the file's content is read or logged.
Result<Step> refused_as_infra(Result<Step> step, const fs::path& objdir, const fs::path& log) {
  if (step || step.error().code != ErrorCode::invalid_input) {
    return step;
  }
  auto message = "build dir: " + step.error().message;
  std::error_code ec;
  fs::remove_all(objdir, ec);
  (void)base::append_file(log, "# " + message + (ec ? "" : "; build dir removed") + "\n");
  return Step{BuildOutcome::infra, message};
}

// The build's outputs into the store: artifacts and the list of compiled sources.
Result<Step> collect(const KernelMake& make, const Recipe& recipe, const fs::path& srctree, const fs::path& dir,
                     BuildResult& result) {
  BISECTD_TRY(collect_artifacts(make, recipe, dir / "artifacts", result.kernel_release, result.fingerprint));
  BISECTD_TRY(record_used_sources(make.objdir, srctree, dir / "artifacts"));
  result.artifact_dir = dir / "artifacts";
  return Step{};
}

} // namespace

KernelBuilder::KernelBuilder(BuildStore& store, fs::path build_root)
    : m_store(store), m_build_root(std::move(build_root)) {}

fs::path KernelBuilder::build_dir_for(const std::string& tree, const std::string& recipe_hash,
                                      const fs::path& worktree) const {
  std::error_code ec;
  auto source = fs::weakly_canonical(worktree, ec);
  auto path_hash = base::hash_hex((ec ? worktree : source).string()).substr(0, 8);
  return m_build_root / (tree + "-" + recipe_hash + "-" + path_hash);
}

Result<std::vector<KconfigOption>> KernelBuilder::wanted_options(const Recipe& recipe) {
  std::vector<KconfigOption> wanted;
  if (!recipe.fragment.empty()) {
    BISECTD_TRY_ASSIGN(auto text, base::read_file(recipe.fragment));
    BISECTD_TRY_ASSIGN(wanted, parse_fragment(text, recipe.fragment.string()));
  }
  BISECTD_TRY_ASSIGN(auto extra, parse_fragment(base::join(recipe.extra_options, "\n"), "build.extra_options"));
  wanted.insert(wanted.end(), extra.begin(), extra.end());
  wanted.push_back({"CONFIG_LOCALVERSION_AUTO", "n"});
  return wanted;
}

Result<BuildResult> KernelBuilder::build(const BuildRequest& request) {
  BISECTD_TRY(check_request(request));
  BISECTD_TRY_ASSIGN(auto hash, request.recipe.hash());
  if (auto stored = m_store.lookup(request.commit, hash)) {
    return *stored;
  }
  BISECTD_TRY(base::make_dirs(m_build_root));
  auto lock_path = build_dir_for(request.tree, hash, request.worktree).string() + ".lock";
  BISECTD_TRY_ASSIGN(auto lock, BuildDirLock::acquire(lock_path));
  // Another thread or process may have built it while we waited for the lock.
  if (auto stored = m_store.lookup(request.commit, hash)) {
    return *stored;
  }
  return build_locked(request, hash);
}

Result<BuildResult> KernelBuilder::build_locked(const BuildRequest& request, const std::string& hash) {
  auto started = std::chrono::steady_clock::now();
  const auto& recipe = request.recipe;
  BISECTD_TRY_ASSIGN(auto wanted, wanted_options(recipe));
  BISECTD_TRY_ASSIGN(auto dir, m_store.prepare(request.commit, hash));
  BuildResult result;
  result.log_path = dir / "build.log";
  std::error_code ec;
  auto srctree = fs::canonical(request.worktree, ec);
  if (ec) {
    return make_error(ErrorCode::io, request.worktree.string() + ": " + ec.message());
  }
  auto objdir = build_dir_for(request.tree, hash, srctree);
  auto make = make_settings(request, srctree, objdir, result.log_path, started);
  BISECTD_TRY(base::write_file_atomic(result.log_path, "# bisectd kernel build of " + request.commit + " (tree " +
                                                         request.tree + ", recipe " + hash + ") in " + objdir.string() +
                                                         "\n"));
  BISECTD_TRY(claim_objdir(objdir, srctree, result.log_path));
  spdlog::info("kbuild {}: building {} in {}", request.tree, base::short_sha(request.commit), objdir.string());
  BISECTD_TRY_ASSIGN(auto step, refused_as_infra(configure(make, recipe, wanted), objdir, result.log_path));
  if (step.outcome == BuildOutcome::ok) {
    BISECTD_TRY_ASSIGN(step, refused_as_infra(compile(make, recipe, result.kernel_release), objdir, result.log_path));
  }
  if (step.outcome == BuildOutcome::ok) {
    BISECTD_TRY_ASSIGN(step, refused_as_infra(collect(make, recipe, srctree, dir, result), objdir, result.log_path));
  }
  result.outcome = step.outcome;
  result.message = step.message;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("kbuild {}: {} {} in {:.0f}s {}", request.tree, base::short_sha(request.commit),
               result.outcome == BuildOutcome::ok ? "built" : "failed", result.seconds, result.message);
  BISECTD_TRY(m_store.save(request.commit, hash, result));
  return result;
}

} // namespace bisectd::kbuild
