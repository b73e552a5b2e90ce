#include "cli/interrupt.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <thread>

namespace bisectd::cli {
namespace {

// Lock-free atomics are async-signal-safe; static_assert keeps it that way.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_signal(int /*signal*/) { g_interrupted.store(true); }

} // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() { return g_interrupted.load(); }

void request_interrupt() { g_interrupted.store(true); }

void reset_interrupt() { g_interrupted.store(false); }

bool sleep_unless_interrupted(std::chrono::milliseconds duration) {
  constexpr std::chrono::milliseconds k_slice{50};
  auto deadline = std::chrono::steady_clock::now() + duration;
  while (!interrupted()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    std::this_thread::sleep_for(std::min(left, k_slice));
  }
  return false;
}

} // namespace bisectd::cli
