#pragma once
// What the daemon's parts share: configuration, the store, trees, builders, machines, the job cache.

#include "daemon/config.hpp"
#include "daemon/cost_history.hpp"
#include "daemon/job.hpp"
#include "daemon/trees.hpp"
#include "kbuild/build_store.hpp"
#include "lab/machine.hpp"
#include "storage/store.hpp"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace bisectd::daemon {

// A lab machine and what it is doing (busy/current under Context::machines_mutex).
struct MachineSlot {
  std::unique_ptr<lab::Machine> machine;
  bool busy = false;
  std::string current;   // commit being built/run, empty when idle
};

class JobCache {
public:
  JobCache(storage::Store& store, std::filesystem::path configs_dir)
    : m_store(store), m_configs_dir(std::move(configs_dir)) {}
  // The parsed job stored under `name` (parsed once per stored text).
  Result<std::shared_ptr<const Job>> get(const std::string& name);

private:
  storage::Store& m_store;
  std::filesystem::path m_configs_dir;
  std::mutex m_mutex;
  std::map<std::string, std::pair<std::string, std::shared_ptr<const Job>>> m_jobs; // name -> (yaml, job)
};

struct Context {
  Config config;
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<Trees> trees;
  std::unique_ptr<kbuild::BuildStore> build_store;
  std::unique_ptr<JobCache> jobs;
  std::vector<MachineSlot> machines;
  std::mutex machines_mutex;       // guards MachineSlot::busy/current for readers off the io thread
  CostHistory costs;               // recent build/boot/run times per job: the bisection engine's cost model
  std::atomic<bool> stopping{false};
  std::int64_t started_at = 0;
  std::function<void()> wake;      // asks the scheduler for a tick soon (safe from any thread)
};

// The strings of a stored JSON array (trees' branches, notify, mail_cc); non-strings are skipped.
std::vector<std::string> json_string_list(const std::string& text);
// The strings of `object[key]` when it is an array (a bisection's stored "excluded", "prebuilt"); else none.
std::vector<std::string> json_string_list(const nlohmann::json& object, const std::string& key);

// The primary (or named) metric of a stored sample, if present and positive.
std::optional<double> metric_value(const storage::SampleRow& sample, const std::string& metric);

} // namespace bisectd::daemon
