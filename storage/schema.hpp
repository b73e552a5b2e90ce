#pragma once
// The versioned schema: forward migrations, and a refusal to open a file from a newer bisectd.

#include "base/error.hpp"
#include "storage/sqlite.hpp"

namespace bisectd::storage {

inline constexpr int k_schema_version = 1;

// Brings the file to k_schema_version. Errors for a file written by a newer version.
Status migrate(Connection& connection);

} // namespace bisectd::storage
