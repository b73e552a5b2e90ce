#include "daemon/verifier.hpp"

namespace bisectd::daemon {

// Placeholder owned by the verification work (issue 6): no verification step yet, the culprit is reported as found.
Result<std::optional<Verification>> verify_culprit(Context&, const storage::BisectionRow&, const Job&,
                                                   const std::vector<std::string>&, std::size_t) {
  return std::optional<Verification>(Verification{});
}

} // namespace bisectd::daemon
