#pragma once
// The versioned schema: forward migrations, and a refusal to open a file from a newer bisectd.

#include "base/error.hpp"
#include "storage/sqlite.hpp"

namespace bisectd::storage {

inline constexpr int k_schema_version = 12;

// Brings the file to `target` (the current version unless a test wants an older one). Errors for a file written
// by a newer version.
Status migrate(Connection& connection, int target = k_schema_version);

} // namespace bisectd::storage
