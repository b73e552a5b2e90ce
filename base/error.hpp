#pragma once
// Expected failures travel as Result<T> = std::expected<T, Error>; exceptions are for bugs only.

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace bisectd {

// What callers handle differently (the scheduler retries infra, skips build_failed, ...).
enum class ErrorCode {
  generic,
  invalid_input,    // bad user input: a field, a ref, a name
  invalid_config,   // bad config or job file
  not_found,        // no such tree, bisection, commit
  conflict,         // already exists
  io,               // file system or database failure
  timeout,          // a step ran past its limit
  unreachable,      // network peer or machine not reachable
  build_failed,     // the commit does not build (skip it)
  boot_failed,      // the kernel did not boot (retry once, then skip)
  benchmark_failed, // the benchmark ran but gave no usable metric
  infra,            // our side failed (disk full, killed): retry
  cancelled,        // stopped on request (shutdown)
};

std::string_view to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::generic;
  std::string message;

  // Prefixes `what: ` to the message, keeping the code ("boot lab3: kexec: timed out").
  [[nodiscard]] Error context(std::string_view what) const { return Error{code, std::string(what) + ": " + message}; }
};

template <class T> using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

inline std::unexpected<Error> make_error(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

} // namespace bisectd

#define BISECTD_CONCAT_INNER(a, b) a##b
#define BISECTD_CONCAT(a, b) BISECTD_CONCAT_INNER(a, b)

// Returns the error of `expr` from the enclosing function, if any.
#define BISECTD_TRY(...)                                                                                               \
  do {                                                                                                                 \
    auto&& bisectd_try_result_ = (__VA_ARGS__);                                                                        \
    if (!bisectd_try_result_) {                                                                                        \
      return std::unexpected(std::move(bisectd_try_result_).error());                                                  \
    }                                                                                                                  \
  } while (false)

// `lhs = *expr` (expr may contain commas), or returns the error of `expr` from the enclosing function.
#define BISECTD_TRY_ASSIGN(lhs, ...)                                                                                   \
  auto BISECTD_CONCAT(bisectd_try_, __LINE__) = (__VA_ARGS__);                                                         \
  if (!BISECTD_CONCAT(bisectd_try_, __LINE__)) {                                                                       \
    return std::unexpected(std::move(BISECTD_CONCAT(bisectd_try_, __LINE__)).error());                                 \
  }                                                                                                                    \
  lhs = std::move(*BISECTD_CONCAT(bisectd_try_, __LINE__))
