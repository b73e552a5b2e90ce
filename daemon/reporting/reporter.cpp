#include "daemon/reporting/reporter.hpp"

#include "base/process.hpp"
#include "base/strings.hpp"
#include "report/recipients.hpp"
#include "report/report.hpp"

#include <set>

namespace bisectd::daemon::reporting {

namespace {

report::Commit to_report_commit(const vcs::CommitInfo& c) {
  report::Commit out;
  out.sha = c.sha;
  out.subject = c.subject;
  out.body = c.body;
  out.author = {c.author_name, c.author_email};
  out.committer = {c.committer_name, c.committer_email};
  for (const auto& t : c.trailers) {
    out.trailers.emplace_back(t.key, t.value);
  }
  out.commit_time = c.commit_time;
  return out;
}

// The raw value of a `Link:` trailer (a lore URL or message id); render_report validates it.
std::string reply_target(const report::Commit& culprit) {
  for (const auto& [key, value] : culprit.trailers) {
    if (base::to_lower(key) == "link") {
      return value;
    }
  }
  return {};
}

// get_maintainer.pl output for the culprit's patch when the tree has the script (kernel trees).
std::vector<std::string> maintainers(TreeRepos& repos, const std::string& tree, const std::string& patch) {
  auto worktree = repos.worktree_dir(tree);
  if (!std::filesystem::exists(worktree / "scripts/get_maintainer.pl") || patch.empty()) {
    return {};
  }
  base::Command cmd;
  cmd.argv = {"perl", "scripts/get_maintainer.pl", "--nogit", "--nogit-fallback", "--norolestats", "-"};
  cmd.cwd = worktree;
  cmd.stdin_data = patch;
  cmd.timeout = std::chrono::seconds(60);
  auto status = base::run(cmd);
  if (!status || !status->ok()) {
    return {};
  }
  return base::split_lines(status->out);
}

Status add_samples(storage::SampleStore& store, const storage::BisectionRow& b, const Conclusion& c,
                   report::ReportInput& input) {
  BISECTD_TRY_ASSIGN(auto samples, store.samples(b.job, c.chain));
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < c.chain.size(); ++i) {
    index[c.chain[i]] = i;
  }
  const auto& culprit = c.chain[c.culprit];
  const auto& parent = c.chain[std::min(c.parent, c.culprit)];
  std::map<std::string, report::MetricComparison> metrics;
  std::set<std::string> boots;
  for (const auto& s : samples) {
    boots.insert(s.boot_id);
    if (auto v = s.metrics.find(b.metric); v != s.metrics.end() && v->second > 0) {
      input.chart.push_back({index[s.commit], s.commit, v->second, index[s.commit] >= c.culprit});
    }
    if (s.commit != culprit && s.commit != parent) {
      continue;
    }
    for (const auto& [name, value] : s.metrics) {
      auto& m = metrics[name];
      m.name = name;
      (s.commit == culprit ? m.culprit_samples : m.parent_samples).push_back(value);
    }
  }
  input.boots = static_cast<int>(boots.size());
  std::stable_sort(input.chart.begin(), input.chart.end(),
                   [](const auto& a, const auto& z) { return a.position < z.position; });
  if (metrics.contains(b.metric)) {
    input.metrics.push_back(metrics[b.metric]);
  }
  for (auto& [name, m] : metrics) {
    if (name != b.metric && !m.parent_samples.empty() && !m.culprit_samples.empty()) {
      input.metrics.push_back(m);
    }
  }
  return {};
}

std::vector<std::string> reproduce_commands(const storage::BisectionRow& b, const storage::TreeRow& tree,
                                            const Job& job) {
  return {"bisectctl tree add " + base::shell_quote(tree.name) + " " + base::shell_quote(tree.url) + " --branch " +
            base::shell_quote(b.branch) + " --job " + base::shell_quote(job.path.filename().string()),
          "bisectctl bisect start --tree " + base::shell_quote(tree.name) + " --good " + b.good + " --bad " + b.bad +
            " --job " + job.name,
          "bisectctl results " + b.culprit.substr(0, 12)};
}

} // namespace

std::pair<report::Recipients, std::string> cap_recipients(report::Recipients who,
                                                          const std::vector<std::string>& notify, std::size_t max) {
  auto total = who.to.size() + who.cc.size();
  if (total <= max) {
    return {std::move(who), ""};
  }
  report::Recipients notify_only;
  notify_only.to = report::compute_recipients({}, notify, {}, {}, true).to;
  auto note = "This report names " + std::to_string(total) + " recipients, more than this robot mails (" +
              std::to_string(max) + "): it went to the tree's notify list only.";
  return {std::move(notify_only), note};
}

Result<storage::ReportRow> MailReporter::compose(const storage::BisectionRow& b, const Job& job,
                                                const storage::TreeRow& tree, const Conclusion& c) {
  report::ReportInput input;
  input.bisection_id = b.id;
  input.created_at = b.created_at;
  input.tree = tree.name;
  input.branch = b.branch;
  input.url = tree.url;
  input.job_name = job.name;
  input.testcase = job.testcase;
  input.machine_description = m_lab.describe_group(job.machine_group);
  input.params = job.params;
  if (job.build.kind == kbuild::RecipeKind::kernel) {
    input.kconfig = std::filesystem::path(job.build.config).filename().string() + "+" +
                    job.build.fragment.stem().string();
  }
  input.metric = b.metric;
  input.direction = job.metrics.direction == bisect::Direction::higher_is_better ? +1 : -1;
  input.confident = c.confident;
  input.p_culprit = c.p_culprit;
  input.runs = c.runs;
  input.builds = c.builds;
  input.verification = c.verification;
  input.layout_artefact = c.layout_artefact;
  input.job_yaml = job.yaml;
  input.from = m_identity.from;
  input.reported_by = m_identity.reported_by;
  std::string patch;
  BISECTD_TRY(m_repos.with_repo(tree.name, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto culprit, repo.commit(c.culprit_sha));
    input.culprit = to_report_commit(culprit);
    // The searched culprit is compared with the reference the numbers come from; a merge named after its branch
    // showed no change is compared with its first parent.
    bool searched = c.culprit_sha == c.chain[c.culprit];
    auto parent_sha = searched ? c.chain[std::min(c.parent, c.culprit)]
                      : culprit.parents.empty() ? c.chain.front() : culprit.parents.front();
    BISECTD_TRY_ASSIGN(auto parent, repo.commit(parent_sha));
    input.parent = to_report_commit(parent);
    if (c.credible_set.size() > 1) {
      for (auto i : c.credible_set) {
        BISECTD_TRY_ASSIGN(auto member, repo.commit(c.chain[i]));
        input.credible_set.push_back(to_report_commit(member));
      }
    }
    patch = repo.patch(c.culprit_sha).value_or("");
    return {};
  }));
  BISECTD_TRY(add_samples(m_samples, b, c, input));
  input.in_reply_to = reply_target(input.culprit);
  input.reproduce = reproduce_commands(b, tree, job);
  // A result below the confidence bar goes to the tree's own notify list only.
  bool private_mail = tree.is_private || !c.confident;
  auto who = report::compute_recipients(input.culprit, tree.notify, tree.mail_cc,
                                        private_mail ? std::vector<std::string>{} : maintainers(m_repos, tree.name, patch),
                                        private_mail);
  auto [capped, note] = cap_recipients(std::move(who), tree.notify, m_identity.max_recipients);
  input.recipients_note = note;
  auto mail = report::render_report(input, capped);
  storage::ReportRow row;
  row.bisection_id = b.id;
  row.subject = mail.subject;
  row.sender = mail.from;
  row.to = mail.to;
  row.cc = mail.cc;
  row.message_id = mail.message_id;
  row.in_reply_to = mail.in_reply_to;
  row.body = mail.body;
  row.text = mail.render();
  return row;
}

} // namespace bisectd::daemon::reporting
