#include "base/hash.hpp"

#include <cstdio>

namespace bisectd::base {

std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed) {
  std::uint64_t hash = seed;
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string hash_hex(std::string_view data) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(fnv1a64(data)));
  return buffer;
}

} // namespace bisectd::base
