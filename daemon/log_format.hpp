#pragma once
// The daemon's log lines: commit subjects, tree names, build and console output reach them, so the message part is
// shown through base::escape_control (one record per line, no escape sequence reaches a terminal or the journal).

#include <spdlog/formatter.h>

#include <memory>

namespace bisectd::daemon {

// spdlog's pattern with the message escaped; `verbose` adds milliseconds and the thread id.
std::unique_ptr<spdlog::formatter> log_formatter(bool verbose);

} // namespace bisectd::daemon
