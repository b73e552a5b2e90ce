#include "bisect/midpoint.hpp"
#include "cli/cmd_offline.hpp"
#include "cli/validate.hpp"
#include "vcs/repository.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

namespace bisectd::cli {
namespace {

struct MidpointOptions {
  std::string repo = ".";
  std::vector<std::string> goods;
  std::string bad;
  bool json = false;
};

// A work tree's repository lives in DIR/.git; a bare repository is DIR itself.
std::filesystem::path git_dir_of(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path dot_git = std::filesystem::path(dir) / ".git";
  return std::filesystem::is_directory(dot_git, ec) ? dot_git : std::filesystem::path(dir);
}

// The range as a DAG over indices (parents outside the range are dropped by make_dag).
std::vector<bisect::DagNode> to_dag(const std::vector<vcs::CommitInfo>& commits) {
  std::vector<std::string> ids;
  std::vector<std::vector<std::string>> parents;
  for (const auto& commit : commits) {
    ids.push_back(commit.sha);
    parents.push_back(commit.parents);
  }
  return bisect::make_dag(ids, parents);
}

Status midpoint(Context& context, const MidpointOptions& options) {
  for (const auto& good : options.goods) {
    BISECTD_TRY(validate_rev(good, "--good"));
  }
  BISECTD_TRY(validate_rev(options.bad, "--bad"));
  BISECTD_TRY_ASSIGN(auto repo, vcs::Repository::open(git_dir_of(options.repo))); // errors name the dir
  BISECTD_TRY_ASSIGN(auto commits, repo.range(options.goods, options.bad));
  auto nodes = to_dag(commits);
  auto found = bisect::find_midpoint(nodes);
  if (!found) {
    return make_error(ErrorCode::not_found, "no commits between the good revisions and " + options.bad);
  }
  const std::string& sha = commits[found->index].sha;
  if (options.json) {
    std::size_t quality = std::min(found->weight, found->total - found->weight);
    context.print_json({{"sha", sha}, {"weight", found->weight}, {"total", found->total}, {"quality", quality}});
  } else {
    context.out() << sha << '\n';
  }
  return {};
}

} // namespace

void register_midpoint_command(CLI::App& app, Context& context, Registry& registry) {
  auto options = std::make_shared<MidpointOptions>();
  CLI::App* command = app.add_subcommand("midpoint", "print the commit git bisect would test next (offline)");
  command->add_option("--repo", options->repo, "repository directory (default: .)");
  command->add_option("--good", options->goods, "a good revision (repeatable)")->required()->allow_extra_args(false);
  command->add_option("--bad", options->bad, "the bad revision")->required();
  command->add_flag("--json", options->json, "print sha, weight, total and quality as JSON");
  registry.add(command, [&context, options] { return midpoint(context, *options); });
}

} // namespace bisectd::cli
