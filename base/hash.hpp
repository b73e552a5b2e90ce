#pragma once
// Stable, non-cryptographic content hashing for cache keys (build store, config hashes).

#include <cstdint>
#include <string>
#include <string_view>

namespace bisectd::base {

// 64-bit FNV-1a; stable across runs and machines.
std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed = 0xcbf29ce484222325ULL);

// fnv1a64 as 16 lowercase hex digits.
std::string hash_hex(std::string_view data);

} // namespace bisectd::base
