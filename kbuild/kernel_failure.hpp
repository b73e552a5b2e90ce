#pragma once
// Telling a commit that does not build apart from a build that our side broke (disk full, OOM, killed).

#include "base/process.hpp"
#include "kbuild/builder.hpp"

#include <string>
#include <string_view>

namespace bisectd::kbuild {

// The outcome of a make run that did not succeed: a timeout, a signal, or a log saying the machine ran
// out of disk or memory is `infra` (retry later); any other non-zero exit is `failed` (the commit).
BuildOutcome classify_make_failure(const base::ExitStatus& status, std::string_view log);

// One line for BuildResult::message: the first compiler/linker/make error in `log` ("mm/memory.c:12:3:
// error: ..."), else the last non-empty line; at most ~300 characters.
std::string first_error_line(std::string_view log);

// A log line as a failure message: trimmed, at most 300 characters.
std::string failure_message_line(std::string_view line);

} // namespace bisectd::kbuild
