// Build failure classification from make's exit status and the build log.

#include "kbuild/kernel_failure.hpp"

#include "base/fd.hpp"
#include "base/strings.hpp"

#include <array>

namespace bisectd::kbuild {

namespace {

// Log lines that mean the host failed, not the commit (gcc reports OOM kills as "Killed signal").
// A full disk is told by base::mentions_disk_full.
constexpr std::array<std::string_view, 4> k_infra_markers{"Cannot allocate memory", "virtual memory exhausted",
                                                          "Killed signal terminated program",
                                                          "out of memory allocating"};

// Markers of the first real error line, in the order compilers and make print them.
constexpr std::array<std::string_view, 5> k_error_markers{": error: ", ": fatal error: ", ": undefined reference to ",
                                                          "*** No rule to make target", "Error: "};

} // namespace

BuildOutcome classify_make_failure(const base::ExitStatus& status, std::string_view log) {
  if (status.timed_out || status.signal != 0) {
    return BuildOutcome::infra;
  }
  if (base::mentions_disk_full(log)) {
    return BuildOutcome::infra;
  }
  for (auto marker : k_infra_markers) {
    if (log.find(marker) != std::string_view::npos) {
      return BuildOutcome::infra;
    }
  }
  return status.code == 0 ? BuildOutcome::ok : BuildOutcome::failed;
}

std::string first_error_line(std::string_view log) {
  auto lines = base::split_lines(log);
  for (const auto& line : lines) {
    for (auto marker : k_error_markers) {
      if (line.find(marker) != std::string::npos) {
        return failure_message_line(line);
      }
    }
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!base::trim(*it).empty()) {
      return failure_message_line(*it);
    }
  }
  return "";
}

std::string failure_message_line(std::string_view line) {
  constexpr std::size_t limit = 300;
  return std::string(base::trim(line).substr(0, limit));
}

} // namespace bisectd::kbuild
