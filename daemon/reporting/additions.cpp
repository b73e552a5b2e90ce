// What a report adds from outside the bisection: the maintainers get_maintainer.pl names for the culprit's patch
// and the compiler's line. Both run the tree's code (sandboxed), so MailReporter::prepare composes them off the
// I/O thread and compose() picks them up once ready.
#include "base/process.hpp"
#include "base/strings.hpp"
#include "daemon/reporting/reporter.hpp"
#include "report/mime.hpp"

namespace bisectd::daemon::reporting {

namespace {

// get_maintainer.pl output for the culprit's patch when the tree has the script (kernel trees), the plausible
// addresses only: the script is the tree's code.
std::vector<std::string> maintainers(const std::filesystem::path& worktree, const std::string& patch) {
  if (!std::filesystem::exists(worktree / "scripts/get_maintainer.pl") || patch.empty()) {
    return {};
  }
  base::Command cmd;
  cmd.argv = {"perl", "scripts/get_maintainer.pl", "--nogit", "--nogit-fallback", "--norolestats", "-"};
  cmd.cwd = worktree;
  cmd.stdin_data = patch;
  cmd.timeout = std::chrono::seconds(60);
  cmd.capture_limit = 64 * 1024;
  cmd.sandbox = base::Sandbox{.writable = {}, .readable = {worktree}};
  auto status = base::run(cmd);
  if (!status || !status->ok()) {
    return {};
  }
  return plausible_maintainers(status->out);
}

// The first word of CC that is not a wrapper ("ccache gcc" -> "gcc").
std::string compiler_command(const kbuild::Recipe& recipe) {
  auto cc = recipe.env.find("CC");
  if (cc == recipe.env.end()) {
    return "gcc";
  }
  for (const auto& word : base::split(base::trim(cc->second), ' ')) {
    if (!word.empty() && word != "ccache" && word != "distcc") {
      return word;
    }
  }
  return "gcc";
}

// The compiler is the job's (a path in the tree, even): it runs sandboxed, or not at all.
std::optional<std::string> command_output(std::vector<std::string> argv) {
  if (!base::sandbox_policy().enabled) {
    return std::nullopt;
  }
  base::Command cmd;
  cmd.argv = std::move(argv);
  cmd.timeout = std::chrono::seconds(10);
  cmd.capture_limit = 4096;
  cmd.sandbox = base::Sandbox{};
  auto status = base::run(cmd);
  if (!status || !status->ok()) {
    return std::nullopt;
  }
  return std::string(base::trim(status->out));
}

} // namespace

std::string compiler_label(const kbuild::Recipe& recipe) {
  auto compiler = compiler_command(recipe);
  auto banner = command_output({compiler, "--version"});
  auto version = command_output({compiler, "-dumpversion"});
  if (!banner || !version || version->empty()) {
    return "";
  }
  auto major = version->substr(0, version->find('.'));
  if (major.empty() || major.size() > 3 || major.find_first_not_of("0123456789") != std::string::npos) {
    return ""; // not a version: nothing of it reaches the mail
  }
  return (banner->find("clang") != std::string::npos ? "clang-" : "gcc-") + major;
}

std::vector<std::string> plausible_maintainers(std::string_view output) {
  std::vector<std::string> out;
  for (const auto& line : base::split_lines(output)) {
    if (out.size() == k_max_maintainers) {
      break;
    }
    if (line.size() > k_max_maintainer_line || !base::is_mail_address(line)) {
      continue; // one line with an '@' and no control character, as every notify entry
    }
    if (auto address = report::parse_address(line); address && address->addr.find('@') != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

std::optional<ReportAdditions> MailReporter::ready_additions(std::int64_t bisection, const std::string& culprit) {
  std::lock_guard lock(m_additions_mutex);
  auto it = m_additions.find(bisection);
  if (it == m_additions.end() || !it->second || it->second->culprit != culprit) {
    return std::nullopt;
  }
  auto additions = std::move(*it->second);
  m_additions.erase(it);
  return additions;
}

ReportAdditions MailReporter::additions(const std::string& tree, const kbuild::Recipe& recipe,
                                        const std::string& culprit, bool with_maintainers) {
  ReportAdditions out;
  out.culprit = culprit;
  out.compiler = compiler_label(recipe);
  if (with_maintainers) {
    std::string patch;
    (void)m_repos.with_repo(tree, [&](vcs::Repo& repo) -> Status {
      patch = repo.patch(culprit).value_or("");
      return {};
    });
    out.maintainers = maintainers(m_repos.worktree_dir(tree), patch);
  }
  return out;
}

bool MailReporter::prepare(const storage::BisectionRow& b, const Job& job, const storage::TreeRow& tree,
                           const Conclusion& c) {
  if (!m_offload) {
    return true; // compose() runs them itself
  }
  {
    std::lock_guard lock(m_additions_mutex);
    auto it = m_additions.find(b.id);
    if (it != m_additions.end() && (!it->second || it->second->culprit == c.culprit_sha)) {
      return it->second.has_value();
    }
    m_additions[b.id] = std::nullopt; // being composed
  }
  bool with_maintainers = !(tree.is_private || !c.confident);
  m_offload([this, id = b.id, tree = tree.name, recipe = job.build, culprit = c.culprit_sha, with_maintainers] {
    auto ready = additions(tree, recipe, culprit, with_maintainers);
    {
      std::lock_guard lock(m_additions_mutex);
      m_additions[id] = std::move(ready);
    }
    if (m_wake) {
      m_wake();
    }
  });
  return false;
}

} // namespace bisectd::daemon::reporting
