#pragma once
// Shared by the libFuzzer targets: the fuzz input as text, and a check that stops the run with a message when an
// invariant of the code under test does not hold (libFuzzer saves the input that made it fail).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace bisectd::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// abort() rather than an exception: libFuzzer reports it as a crash and keeps the input.
inline void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

} // namespace bisectd::fuzz
