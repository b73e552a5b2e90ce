#include "daemon/reporting/reporter.hpp"

#include "base/strings.hpp"
#include "daemon/core/requests.hpp"
#include "daemon/reporting/reproduce.hpp"
#include "report/change_table.hpp"
#include "report/comparison.hpp"
#include "report/mime.hpp"
#include "report/recipients.hpp"
#include "report/report.hpp"

#include <algorithm>
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

// Boots are counted only on machines whose backend boots a kernel (`local` runs on this host as it is); unset
// when no sample came from one.
class BootCount {
public:
  explicit BootCount(const LabView& lab) {
    for (const auto& m : lab.machines()) {
      m_backends[m.name] = m.backend;
    }
  }
  void add(const storage::SampleRow& s) {
    auto backend = m_backends.find(s.machine);
    if (backend != m_backends.end() && backend->second != "local") {
      m_boots.insert(s.boot_id);
    }
  }
  [[nodiscard]] std::optional<int> count() const {
    return m_boots.empty() ? std::nullopt : std::optional<int>(static_cast<int>(m_boots.size()));
  }

private:
  std::map<std::string, std::string> m_backends;
  std::set<std::string> m_boots;
};

std::vector<std::string> culprit_build(const Conclusion& c) {
  return c.culprit_build.empty() ? std::vector<std::string>{c.chain[c.culprit]} : c.culprit_build;
}

std::vector<std::string> parent_build(const Conclusion& c) {
  return c.parent_build.empty() ? std::vector<std::string>{c.chain[std::min(c.parent, c.culprit)]} : c.parent_build;
}

Status add_samples(storage::SampleStore& store, const LabView& lab, const storage::BisectionRow& b, const Conclusion& c,
                   report::ReportInput& input) {
  BISECTD_TRY_ASSIGN(auto samples, store.samples(b.job, c.chain));
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < c.chain.size(); ++i) {
    index[c.chain[i]] = i;
  }
  auto culprit_side = culprit_build(c), parent_side = parent_build(c);
  std::set<std::string> culprit(culprit_side.begin(), culprit_side.end()), parent(parent_side.begin(), parent_side.end());
  std::vector<report::RunMetrics> parent_runs, culprit_runs;
  BootCount boots(lab);
  for (const auto& s : samples) {
    boots.add(s);
    if (auto v = s.metrics.find(b.metric); v != s.metrics.end() && v->second > 0) {
      input.chart.push_back({index[s.commit], s.commit, v->second, index[s.commit] >= c.culprit});
    }
    if (culprit.contains(s.commit) || parent.contains(s.commit)) {
      (culprit.contains(s.commit) ? culprit_runs : parent_runs).push_back(s.metrics);
    }
  }
  input.boots = boots.count();
  std::stable_sort(input.chart.begin(), input.chart.end(),
                   [](const auto& a, const auto& z) { return a.position < z.position; });
  // Every metric of either side: the report shows those of both sides and names the monitors that gave none.
  auto metrics = report::compare_runs(parent_runs, culprit_runs);
  auto primary = std::find_if(metrics.begin(), metrics.end(), [&](const auto& m) { return m.name == b.metric; });
  if (primary != metrics.end()) { // first: the report's primary metric when the job's is missing
    std::rotate(metrics.begin(), primary, primary + 1);
  }
  input.metrics = std::move(metrics);
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

// The chain's commits the bisection skipped (the flags its search read), with the store's reason; commit order.
Result<std::vector<std::pair<std::string, std::string>>> skipped_in(storage::SampleStore& store, const Job& job,
                                                                    const std::vector<std::string>& chain) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& sha : chain) {
    BISECTD_TRY_ASSIGN(auto flags, store.flags(flag_key(job, sha)));
    if (flags.is_skipped()) {
      out.emplace_back(sha, flags.skip_reason());
    }
  }
  return out;
}

report::EarlierReport earlier_of(const storage::ReportRow& row) {
  return report::EarlierReport{row.bisection_id, row.message_id, row.subject, row.created_at};
}

} // namespace

std::string kconfig_label(const kbuild::Recipe& recipe) {
  std::string label = recipe.arch + "-" + std::filesystem::path(recipe.config).filename().string();
  if (!recipe.fragment.empty()) {
    label += "+" + recipe.fragment.stem().string();
  }
  return label;
}

Compared compared_commits(const Conclusion& c, const std::string& first_parent) {
  Compared out;
  out.culprit = c.culprit_sha;
  out.measured_culprit = c.chain[c.culprit];
  out.measured = c.chain[std::min(c.parent, c.culprit)];
  out.culprit_build = culprit_build(c);
  out.parent_build = parent_build(c);
  if (c.culprit_sha != c.chain[c.culprit]) {
    // A merge named after its branch showed no change: compared with its first parent.
    out.parent = first_parent.empty() ? c.chain.front() : first_parent;
    return out;
  }
  out.parent = c.chain[c.culprit > 0 ? c.culprit - 1 : 0];
  out.same_binary = out.measured != out.parent;
  return out;
}

Result<report::ShiftEstimate> compared_shift(storage::SampleStore& samples, const std::string& job,
                                             const std::string& metric, const Compared& compared) {
  report::MetricComparison comparison;
  comparison.name = metric;
  BISECTD_TRY_ASSIGN(auto parent, samples.metric_samples(job, compared.parent_build, metric));
  BISECTD_TRY_ASSIGN(auto culprit, samples.metric_samples(job, compared.culprit_build, metric));
  for (const auto& s : parent) {
    comparison.parent_samples.push_back(s.value);
  }
  for (const auto& s : culprit) {
    comparison.culprit_samples.push_back(s.value);
  }
  return report::estimate_shift(comparison);
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
  // A public tree's get_maintainer.pl and the compiler probe may take a minute: prepare() had them run off the
  // scheduler's thread; without it (tests, tools) they run here.
  bool private_mail = tree.is_private || !c.confident;
  auto additions = ready_additions(b.id, c.culprit_sha);
  if (!additions) {
    additions = this->additions(tree.name, job.build, c.culprit_sha, !private_mail);
  }
  input.compiler = additions->compiler;
  if (job.build.kind == kbuild::RecipeKind::kernel) {
    input.kconfig = kconfig_label(job.build);
  }
  input.watch = job.metrics.watch;
  input.monitors = monitor_families(job);
  input.metric = b.metric;
  input.direction = job.metrics.direction == bisect::Direction::higher_is_better ? +1 : -1;
  input.confident = c.confident;
  input.p_culprit = c.p_culprit;
  input.runs = c.runs;
  input.builds = c.builds;
  input.runs_reused = c.runs_reused;
  input.machine_seconds = c.machine_seconds;
  input.verification = c.verification;
  input.layout_artefact = c.layout_artefact;
  input.job_yaml = job.yaml;
  input.from = m_identity.from;
  input.reported_by = m_identity.reported_by;
  input.archive_url = m_identity.archive_url;
  if (c.earlier_report && c.confident) {
    input.earlier = earlier_of(*c.earlier_report);
  }
  BISECTD_TRY_ASSIGN(auto skipped, skipped_in(m_samples, job, c.chain));
  BISECTD_TRY(m_repos.with_repo(tree.name, [&](vcs::Repo& repo) -> Status {
    BISECTD_TRY_ASSIGN(auto culprit, repo.commit(c.culprit_sha));
    input.culprit = to_report_commit(culprit);
    if (c.confident && c.credible_set.size() <= 1) {
      input.diffstat = repo.diffstat(c.culprit_sha).value_or(""); // a report without it beats no report
    }
    for (const auto& [sha, why] : skipped) {
      BISECTD_TRY_ASSIGN(auto commit, repo.commit(sha));
      input.skipped.push_back({to_report_commit(commit), why});
    }
    // The culprit is compared with its real parent; when the parent's numbers come from another commit with the
    // same binary, the report names that one too.
    auto compared = compared_commits(c, culprit.parents.empty() ? "" : culprit.parents.front());
    BISECTD_TRY_ASSIGN(auto parent, repo.commit(compared.parent));
    input.parent = to_report_commit(parent);
    if (compared.same_binary) {
      BISECTD_TRY_ASSIGN(auto measured, repo.commit(compared.measured));
      input.same_binary_as = to_report_commit(measured);
    }
    if (c.credible_set.size() > 1) {
      for (auto i : c.credible_set) {
        BISECTD_TRY_ASSIGN(auto member, repo.commit(c.chain[i]));
        input.credible_set.push_back(to_report_commit(member));
      }
    }
    return {};
  }));
  BISECTD_TRY(add_samples(m_samples, m_lab, b, c, input));
  input.in_reply_to = reply_target(input.culprit);
  auto reproduce = reproduction(job, tree.url, tree.name, input.culprit.sha, input.parent.sha);
  input.reproduce_script = std::move(reproduce.lines);
  input.files = std::move(reproduce.files);
  input.reproduce = reproduce_commands(b, tree, job);
  // A result below the confidence bar goes to the tree's own notify list only.
  auto who =
    report::compute_recipients(input.culprit, tree.notify, tree.mail_cc,
                               private_mail ? std::vector<std::string>{} : additions->maintainers, private_mail);
  auto [capped, note] = report::cap_recipients(std::move(who), tree.notify, m_identity.max_recipients);
  input.recipients_note = note;
  auto mail = report::render_report(input, capped);
  storage::ReportRow row;
  input.row_cap = 0; // the same report with every row, for `bisectctl report ID --all`
  if (auto all = report::render_report(input, capped).render(); all != mail.render()) {
    row.text_all = std::move(all);
  }
  row.bisection_id = b.id;
  row.subject = mail.subject;
  row.sender = mail.from;
  row.to = mail.to;
  row.cc = mail.cc;
  row.message_id = mail.message_id;
  row.in_reply_to = mail.in_reply_to;
  row.body = mail.body;
  row.text = mail.render();
  row.repeat_of = input.earlier ? c.earlier_report->id : 0;
  return row;
}

} // namespace bisectd::daemon::reporting
