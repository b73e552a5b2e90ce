#pragma once
// Asks the scheduler for a tick soon (safe from any thread): parts call it when something they did makes work
// ready (a tree added, a bisection opened, a build slot freed).

#include <functional>

namespace bisectd::daemon {

using Wake = std::function<void()>;

} // namespace bisectd::daemon
