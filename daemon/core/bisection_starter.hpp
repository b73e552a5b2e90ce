#pragma once
// Opening a bisection: the watcher (a confirmed shift) and the API (by hand) do it through this interface, which
// the bisection driver implements.

#include "base/error.hpp"
#include "storage/states.hpp"

#include <cstdint>
#include <string>

namespace bisectd::daemon {

struct BisectionStart {
  std::string tree, branch;
  std::string good, bad; // any revisions; resolved and checked (good must be an ancestor of bad)
  std::string job;       // the job's name
  std::string metric;    // empty: the job's primary metric
  storage::Origin origin = storage::Origin::manual;
};

class BisectionStarter {
public:
  virtual ~BisectionStarter() = default;
  // Validates the refs and opens the bisection; returns its id. Errors name the bad ref, tree or job.
  virtual Result<std::int64_t> start(const BisectionStart& start) = 0;
};

} // namespace bisectd::daemon
