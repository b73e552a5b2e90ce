#pragma once
// Culprit verification before mailing (issue 6): revert test, code-layout (forced alignment) test, plausibility.
// Like everything else it is recomputed from stored samples on every tick: it queues the test requests it needs
// (variants "layout" and "revert"), and answers once their samples are in.

#include "daemon/context.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bisectd::daemon {

struct Verification {
  std::vector<std::string> lines;   // for the report and `bisectctl show` ("revert: ...", "layout: ...")
  bool layout_artefact = false;     // the shift vanished with forced alignment
  bool implausible = false;         // the culprit cannot explain a shift: do not mail it, search on
  nlohmann::json details = nlohmann::json::object(); // stored under result.verification
};

// Verifies `chain[culprit]` of bisection `b` against `chain[parent]` (its first parent, or the nearest predecessor
// with the same build when those between touch nothing built). Returns nullopt while verification runs are
// pending (it has queued them), else the outcome. Steps switched off in the job's `verify:` section are skipped.
Result<std::optional<Verification>> verify_culprit(Context& context, const storage::BisectionRow& b, const Job& job,
                                                   const std::vector<std::string>& chain, std::size_t culprit,
                                                   std::size_t parent);

} // namespace bisectd::daemon
