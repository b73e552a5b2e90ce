#pragma once
// The report mail of a finished bisection, in the layout of 0-Day's LKP reports, from plain structs that the
// daemon fills from storage. Pure text generation: the same input always gives the same bytes.

#include "report/mail.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bisectd::report {

struct Person {
  std::string name, email;
};

struct Commit {
  std::string sha, subject, body;
  Person author, committer;
  std::vector<std::pair<std::string, std::string>> trailers; // ("Signed-off-by", "Jane <j@x.org>"), in order
  std::int64_t commit_time = 0;
};

// One metric's samples at the parent and at the culprit (one value per run).
struct MetricComparison {
  std::string name;
  std::vector<double> parent_samples, culprit_samples;
};

// One sample of the primary metric at a tested commit; `position` is the commit's index in commit order.
struct ChartPoint {
  std::size_t position = 0;
  std::string commit;
  double value = 0;
  bool bad_side = false; // the commit is at or after the culprit
};

// The culprit's change of the primary metric, culprit vs parent, as a fraction (-0.065) with its 95% interval:
// the one shift number of a report (subject, opening, confidence block and the table's %change all give it).
struct ShiftEstimate {
  bool known = false; // false: fewer than one sample on a side
  double estimate = 0, low = 0, high = 0;
  std::size_t parent_runs = 0, culprit_runs = 0;
};

// An earlier report of the same culprit for the same tree and job: the repeat is not mailed, it answers that one.
struct EarlierReport {
  std::int64_t bisection_id = 0;
  std::string message_id, subject;
  std::int64_t created_at = 0;
};

// A commit the bisection could not measure (it does not build, boot or run) and searched around.
struct SkippedCommit {
  Commit commit;
  std::string why; // "unbuildable: mm/x.c:12: error: ..." as the store has it (a compiler's words: hostile)
};

// At most this many skipped commits and diffstat file lines are listed; the rest are counted.
inline constexpr std::size_t k_max_skipped_listed = 20;
inline constexpr std::size_t k_max_diffstat_files = 40;

// How many significant rows a comparison table shows before "N more rows" (a screenful, as LKP's tables are read).
inline constexpr std::size_t k_default_row_cap = 30;

struct ReportInput {
  std::int64_t bisection_id = 0;
  std::int64_t created_at = 0; // Unix time: the stable Message-ID and the Date header
  std::string tree, branch, url, job_name, testcase, machine_description;
  std::vector<std::pair<std::string, std::string>> params; // under "parameters:" and in the axis line
  std::string compiler, kconfig;                           // axis line values (may be empty)
  std::string metric;
  int direction = +1;     // +1: higher is better
  Commit culprit, parent; // `parent`: the culprit's real (first) parent
  // Set when the parent's samples come from another commit with the same binary (an identical build, or the
  // nearest predecessor whose change is relevant to the build): the commit whose build was measured.
  std::optional<Commit> same_binary_as;
  // Non-empty when the answer is a set of commits ("could be any of"); `culprit` is then the first commit
  // measured bad and `parent` the last one measured good.
  std::vector<Commit> credible_set;
  bool confident = true; // false: the "no culprit with high confidence" mail
  // Primary metric first, then others; render_report shows the `watch` metrics next and of the rest only those
  // whose change is significant (report/significance.hpp), in LKP's order (report/comparison.hpp).
  std::vector<MetricComparison> metrics;
  std::vector<std::string> watch; // the job's watch: metrics, shown after the primary even within noise
  // The job's monitors (metric families): those that gave no metric on any run are named under the table.
  std::vector<std::string> monitors;
  // At most this many significant rows after the primary and watched ones, then "N more rows: bisectctl report
  // ID --all"; 0: every row (what --all prints).
  std::size_t row_cap = k_default_row_cap;
  // The culprit's `git show --stat` lines (vcs), shown for a single culprit; empty: not shown. Paths are the tree's.
  std::string diffstat;
  std::vector<SkippedCommit> skipped; // in commit order
  double p_culprit = 0;
  int runs = 0, builds = 0;              // what the bisection's own requests caused, every phase
  int runs_reused = 0;                   // runs measured before it (the alert's, the watch's) that it used
  double machine_seconds = 0;            // lab machines held for its visits; 0: not counted
  std::optional<int> boots;              // unset on backends that do not boot (local)
  std::vector<ChartPoint> chart;         // every sample of every tested commit, commit order
  std::vector<std::string> verification; // "confirm: 10 pairs, -15.2% ± 1.1%"
  bool layout_artefact = false;          // the shift vanished with forced code alignment
  std::string job_yaml;                    // attached to the mail as <job_name>.yaml
  std::vector<std::string> reproduce_script; // shell lines measuring the culprit without bisectd (argv quoted)
  std::vector<Attachment> files;             // attached after the job file: what reproduce_script reads
  std::vector<std::string> reproduce;        // bisectctl commands
  std::string from;                     // "bisectd <bisectd@localhost>"
  std::string reported_by;              // the Reported-by: tag; empty: no tag lines
  std::string archive_url;              // where the list archives the mail ("https://lore.kernel.org/r/");
                                        // empty: no Closes: tag
  std::optional<EarlierReport> earlier; // this culprit was reported before (tree and job alike)
  std::string in_reply_to;              // message id or lore URL from a Link: trailer; may be empty
  std::string recipients_note;          // why fewer people got the mail than the commit names; may be empty
};

struct Recipients {
  std::vector<std::string> to; // "Name <addr>" or "addr", deduplicated (see compute_recipients)
  std::vector<std::string> cc;
};

// The whole mail: subject, LKP-style body, stable Message-ID, Date from `created_at` (the outbox dates it again
// when it sends it), threading headers, the job file and what the reproduce lines read attached.
Mail render_report(const ReportInput& input, const Recipients& recipients);

// The subject line alone (see render_report).
std::string report_subject(const ReportInput& input);

// The name the job file is attached under: "<job name>.yaml", file-name safe.
std::string job_file_name(const ReportInput& input);

// "<YYYYMMDDHHMM.<id>.<8 hex>-bisectd@domain>": the same for the same bisection, so retries never send twice.
std::string message_id_for(std::int64_t bisection_id, std::int64_t created_at, std::string_view domain);

} // namespace bisectd::report
