#pragma once
// SIGINT handling: the handler only raises a flag; long operations (HTTP transfers, `wait`) poll it
// and return ErrorCode::cancelled, which main turns into exit code 130.

#include <chrono>

namespace bisectd::cli {

// Installs the SIGINT/SIGTERM handler (idempotent).
void install_interrupt_handler();

// True once SIGINT or SIGTERM arrived (or request_interrupt() was called).
bool interrupted();

// Raises the flag by hand (tests).
void request_interrupt();

// Clears the flag (tests).
void reset_interrupt();

// Sleeps up to `duration` in short slices; returns false early when interrupted.
bool sleep_unless_interrupted(std::chrono::milliseconds duration);

} // namespace bisectd::cli
