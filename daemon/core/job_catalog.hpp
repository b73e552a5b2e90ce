#pragma once
// Where the daemon's parts get a job by name (the stored job files, parsed once per stored text).

#include "base/error.hpp"
#include "daemon/core/job.hpp"

#include <memory>
#include <string>

namespace bisectd::daemon {

class JobCatalog {
public:
  virtual ~JobCatalog() = default;
  // The job stored under `name`. Error: not_found, or the stored text no longer parses.
  virtual Result<std::shared_ptr<const Job>> get(const std::string& name) = 0;
};

} // namespace bisectd::daemon
