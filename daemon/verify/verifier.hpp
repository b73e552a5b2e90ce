#pragma once
// Culprit verification before mailing: plausibility, the interleaved confirm pairs, the revert test and the
// code-layout (forced alignment) test. Like everything else it is recomputed from stored samples on every tick: it
// queues the test requests it needs (variants "layout" and "revert:<sha>"), and answers once their samples are in.

#include "daemon/core/job.hpp"
#include "daemon/core/tree_repos.hpp"
#include "daemon/run/builds.hpp"
#include "storage/bisection_store.hpp"
#include "storage/queue_store.hpp"
#include "storage/sample_store.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bisectd::daemon::verify {

struct Verification {
  std::vector<std::string> lines; // for the report and `bisectctl show` ("revert: ...", "layout: ...")
  bool layout_artefact = false;   // the shift vanished with forced alignment
  bool implausible = false;       // the culprit cannot explain a shift: do not mail it, search on
  nlohmann::json details = nlohmann::json::object(); // stored as the bisection's verification
};

// What the bisection driver asks to verify: the culprit against its parent (the first parent, or the nearest
// predecessor with the same build when those between touch nothing built). Each side is a build: its first commit
// is the one rebuilt and measured by the checks, and the commits listed after it build identically (the engine
// shares their samples), so the runs the engine took on any of them count for the confirm pairs.
struct Suspect {
  std::vector<std::string> culprit; // the culprit, then the commits that build identically to it
  std::vector<std::string> parent;  // the parent, then the commits that build identically to it
};

// nullopt while verification runs are pending (they are queued), else the outcome. Steps switched off in the
// job's `verify:` are skipped.
class Verifier {
public:
  virtual ~Verifier() = default;
  virtual Result<std::optional<Verification>> verify(const storage::BisectionRow& b, const Job& job,
                                                     const Suspect& suspect) = 0;
};

// The stores and parts verification reads and writes.
struct VerifyDeps {
  storage::SampleStore& samples;
  storage::QueueStore& queue;
  storage::BisectionStore& events;
  TreeRepos& repos;
  const run::Builds& builds;
};

class CulpritVerifier final : public Verifier {
public:
  explicit CulpritVerifier(VerifyDeps deps) : m_deps(deps) {}
  Result<std::optional<Verification>> verify(const storage::BisectionRow& b, const Job& job,
                                             const Suspect& suspect) override;

private:
  VerifyDeps m_deps;
};

} // namespace bisectd::daemon::verify
