#pragma once
// Requests no machine can take (daemon/core/unplaceable.hpp) would wait for good (a bisection stuck at "running"
// across restarts); after `timeout` such a request fails, with its bisection, naming why.

#include "daemon/core/unplaceable.hpp"
#include "storage/rows.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::daemon::run {

struct Unplaceable {
  storage::RequestRow request;
  std::string reason; // "... for 30m"
};

// Remembers since when each queued request has been unplaceable (in memory: a restarted daemon waits the whole
// timeout again, never less).
class PlacementWatch {
public:
  explicit PlacementWatch(std::chrono::seconds timeout) : m_timeout(timeout) {}

  // The requests of `queued` that no machine of `machines` could take for at least the timeout, as of `now`
  // (unix seconds). A request that became placeable again, or left the queue, starts over.
  std::vector<Unplaceable> due(const std::vector<storage::RequestRow>& queued, const std::vector<MachineInfo>& machines,
                               std::int64_t now);

private:
  std::chrono::seconds m_timeout;
  std::map<std::int64_t, std::int64_t> m_since; // request id -> unix time first seen unplaceable
};

} // namespace bisectd::daemon::run
