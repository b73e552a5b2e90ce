#pragma once
// Carries out one queued test request on one machine: checkout → build (or reuse) → visit → store.
// Runs on a worker thread; everything it learns goes to the store, so the scheduler can recompute from there.

#include "daemon/context.hpp"

namespace bisectd::daemon {

enum class RequestOutcome { done, failed, requeued };

// Executes `request` on `slot`'s machine. Never throws; failures are stored on the request.
RequestOutcome run_request(Context& context, MachineSlot& slot, const storage::RequestRow& request);

// The recipe a request builds: the job's, adjusted for verification variants ("layout" forces alignment).
kbuild::Recipe recipe_for(const Job& job, const std::string& variant);

} // namespace bisectd::daemon
