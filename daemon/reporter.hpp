#pragma once
// Turns a finished bisection into its report mail (rendered by report/) from stored data only.

#include "daemon/context.hpp"

#include <optional>
#include <string>
#include <vector>

namespace bisectd::daemon {

// What the bisection concluded, in commit terms.
struct Conclusion {
  std::vector<std::string> chain;          // the searched first-parent chain, good first
  std::size_t culprit = 0;                 // index into chain (the most likely one when not confident)
  std::size_t parent = 0;                  // what it is compared with: culprit - 1, or the nearest predecessor
                                           // with the same build when those between touch nothing built
  std::string culprit_sha;                 // may differ from chain[culprit] after merge recursion
  double p_culprit = 0;
  std::vector<std::size_t> credible_set;   // indices; more than one when ambiguous
  bool confident = true;
  int runs = 0, builds = 0;
  std::vector<std::string> verification;   // lines for the report
  bool layout_artefact = false;
};

// Renders the report of bisection `b` as a storage row (subject, recipients, Message-ID, full text).
Result<storage::ReportRow> compose_report(Context& context, const storage::BisectionRow& b, const Job& job,
                                          const storage::TreeRow& tree, const Conclusion& conclusion);

} // namespace bisectd::daemon
