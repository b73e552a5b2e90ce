#pragma once
// Turns a finished bisection into its report mail (rendered by report/) from stored data only.

#include "daemon/core/job.hpp"
#include "daemon/core/lab_view.hpp"
#include "daemon/core/tree_repos.hpp"
#include "report/report.hpp"
#include "storage/rows.hpp"
#include "storage/sample_store.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::daemon::reporting {

// What the bisection concluded, in commit terms.
struct Conclusion {
  std::vector<std::string> chain; // the searched first-parent chain, good first
  std::size_t culprit = 0;        // index into chain (the most likely one when not confident)
  std::size_t parent = 0;         // what it is compared with: culprit - 1, or the nearest predecessor
                                  // with the same build when those between touch nothing built
  std::string culprit_sha;        // may differ from chain[culprit] after merge recursion
  // The commits whose samples describe each side: chain[culprit] (chain[parent]) and those that build identically
  // to it. The runs of a side may have been taken on any of them: the verification pairs of a parent found to
  // share its build only after they ran were taken on the parent itself, not on the class's first commit. Empty:
  // chain[culprit] (chain[parent]) alone.
  std::vector<std::string> culprit_build, parent_build;
  double p_culprit = 0;
  std::vector<std::size_t> credible_set; // indices; more than one when ambiguous
  bool confident = true;
  int runs = 0, builds = 0;              // caused by the bisection's own requests, every phase
  int runs_reused = 0;                   // runs of others (the alert's, the watch's) it used
  double machine_seconds = 0;            // wall time of its requests' visits
  std::vector<std::string> verification; // lines for the report
  bool layout_artefact = false;
  // The first report of the same culprit for the same tree and job, when there is one: this one answers it
  // and is not mailed.
  std::optional<storage::ReportRow> earlier_report;
};

// What the report compares: the culprit with its real parent (named), and the commits whose samples give the
// numbers: the searched culprit, and for the parent `measured`, the commit whose identical build was measured in
// its place (the parent itself when it has its own).
struct Compared {
  std::string culprit, parent;            // as named in the report
  std::string measured_culprit, measured; // whose samples the numbers are (named), with their identical builds:
  std::vector<std::string> culprit_build, parent_build;
  bool same_binary = false; // the parent's numbers are `measured`'s, another commit's
};

// The compared commits of a conclusion; `first_parent` is the culprit's first parent (used when the culprit is
// not the searched chain's commit, after merge recursion).
Compared compared_commits(const Conclusion& conclusion, const std::string& first_parent);

// The shift of `metric` between the compared commits' samples.
Result<report::ShiftEstimate> compared_shift(storage::SampleStore& samples, const std::string& job,
                                             const std::string& metric, const Compared& compared);

class Reporter {
public:
  virtual ~Reporter() = default;
  // True when compose() may run now; false while what the report adds from the tree's code (its get_maintainer.pl,
  // the compiler's version) is being collected off the scheduler's thread: ask again at the next tick.
  virtual bool prepare(const storage::BisectionRow& /*b*/, const Job& /*job*/, const storage::TreeRow& /*tree*/,
                       const Conclusion& /*conclusion*/) {
    return true;
  }
  // Renders the report of bisection `b` as a storage row (subject, recipients, Message-ID, full text).
  virtual Result<storage::ReportRow> compose(const storage::BisectionRow& b, const Job& job,
                                             const storage::TreeRow& tree, const Conclusion& conclusion) = 0;
};

// Who the mail is from and who reports, and how many may receive it (the config file's mail section).
struct MailIdentity {
  std::string from;
  std::string reported_by; // empty: no Reported-by: tag
  std::string archive_url; // empty: no Closes: tag
  // Beyond this many recipients (a commit with hundreds of trailers) only the tree's notify list is mailed.
  std::size_t max_recipients = 40;
};

// "gcc-12" or "clang-16": the compiler a build of `recipe` uses (its CC, else gcc), asked for its version;
// empty when it cannot be run.
std::string compiler_label(const kbuild::Recipe& recipe);

// At most this many get_maintainer.pl addresses, each a line of at most this many bytes, reach a report.
inline constexpr std::size_t k_max_maintainers = 50;
inline constexpr std::size_t k_max_maintainer_line = 200;

// The lines of get_maintainer.pl's output that are one plausible address each ("Name <a@b>"): no control
// character, not too long, at most k_max_maintainers of them.
std::vector<std::string> plausible_maintainers(std::string_view output);

// What a report takes from the tree's code, collected before composing it.
struct ReportAdditions {
  std::string culprit; // the commit they are for
  std::string compiler;
  std::vector<std::string> maintainers;
};

// "x86_64-tinyconfig+fragment": the kernel config a kernel recipe builds, named as LKP's kconfig axis.
std::string kconfig_label(const kbuild::Recipe& recipe);

// The report as LKP formats it: the culprit against its real parent with every sampled metric, the test
// machine, verification lines, the chart of the bisection's samples; recipients from the culprit's trailers, the
// tree's lists and (for public trees) the tree's get_maintainer.pl.
class MailReporter final : public Reporter {
public:
  // Runs `work` on another thread (the daemon's pool).
  using Offload = std::function<void(std::function<void()> work)>;

  MailReporter(storage::SampleStore& samples, TreeRepos& repos, const LabView& lab, MailIdentity identity)
      : m_samples(samples), m_repos(repos), m_lab(lab), m_identity(std::move(identity)) {}

  // From now on prepare() collects the additions with `offload` and calls `wake` when they are ready.
  void offload_additions(Offload offload, std::function<void()> wake) {
    m_offload = std::move(offload);
    m_wake = std::move(wake);
  }

  bool prepare(const storage::BisectionRow& b, const Job& job, const storage::TreeRow& tree,
               const Conclusion& conclusion) override;
  Result<storage::ReportRow> compose(const storage::BisectionRow& b, const Job& job, const storage::TreeRow& tree,
                                     const Conclusion& conclusion) override;

private:
  ReportAdditions additions(const std::string& tree, const kbuild::Recipe& recipe, const std::string& culprit,
                            bool with_maintainers);
  // The additions prepare() collected for this bisection and culprit, taken; nullopt when there are none.
  std::optional<ReportAdditions> ready_additions(std::int64_t bisection, const std::string& culprit);

  storage::SampleStore& m_samples;
  TreeRepos& m_repos;
  const LabView& m_lab;
  MailIdentity m_identity;
  Offload m_offload;
  std::function<void()> m_wake;
  std::mutex m_additions_mutex;
  std::map<std::int64_t, std::optional<ReportAdditions>> m_additions; // by bisection; nullopt: being collected
};

} // namespace bisectd::daemon::reporting
