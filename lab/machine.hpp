#pragma once
// A lab machine: install a built artifact, boot it (when there is a kernel), run the benchmark n times.
// One visit = reserve → install → boot → verify the booted kernel is the built one → run ×n → collect → release.

#include "base/error.hpp"
#include "base/process.hpp"
#include "lab/check_line.hpp"
#include "lab/settings.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::lab {

// One entry of the lab file (configs/lab/*.yaml).
struct MachineSpec {
  std::string name;
  std::string group;
  std::string backend = "local"; // local | qemu | ssh | lava
  std::string description;       // "88 threads 2 sockets Intel(R) Xeon(R) ..."
  int cpus = 1;
  int memory_mb = 512;
  Settings settings;  // backend-specific keys (lab/settings.hpp)
  std::string origin; // where the lab file defines it ("lab.yaml:2: machines[0]"); "" when not from a file
};

enum class MetricFormat { lkp, json };

// What one run may add: a benchmark printing a million distinct names must not become a million rows (nor a
// million map entries while parsing). Past the cap, new names are dropped (names already kept still average).
struct MetricLimits {
  std::size_t max_metrics = 10'000;
  std::size_t max_name_bytes = 256; // perf-profile call chains are long; anything longer is junk
};

// What to run, from the job file's `run:` and `metrics:` sections.
struct RunSpec {
  std::vector<std::string> command; // argv; never through a shell
  std::chrono::seconds timeout{60}; // per run
  std::map<std::string, std::string> env;
  MetricFormat format = MetricFormat::lkp;
  std::string primary; // a run without this metric is a failed run
  // System monitors collected around each run (monitors/monitors.hpp names: proc-vmstat, vmstat, interrupts,
  // softirqs, meminfo, time); their metrics join the run's own. Backends that cannot collect ignore them.
  std::set<std::string> monitors;
  // perf around each run (the job file's `perf: {stat, profile}`): perf-stat.* counts of the benchmark and a
  // sampling profile (perf-profile.*). Collected by the QEMU and LAVA guests, which carry the host's perf in the
  // initramfs, and by ssh boxes that have their own perf; `local` ignores them.
  struct Perf {
    bool stat = false;
    bool profile = false;
    [[nodiscard]] bool any() const { return stat || profile; }
    bool operator==(const Perf&) const = default;
  } perf;
};

// The metric families a run's collection asks for, in LKP's order: its monitors, then perf-stat and perf-profile when
// perf is on. A report names those that gave nothing as unavailable.
std::vector<std::string> collected_families(const RunSpec& run);

// The time one run may take beyond the benchmark's own limit on a machine that collects around it: the markers and
// /proc snapshots, and with perf its start-up and reports (seconds each under QEMU's TCG).
std::chrono::seconds run_overhead(const RunSpec& run);

struct VisitRequest {
  std::string commit;
  std::filesystem::path artifact_dir; // from the build store
  std::string kernel_release;         // expected `uname -r` (kernel builds), else empty
  RunSpec run;
  int runs = 1;
  std::filesystem::path log_dir; // where console and run logs go
  const std::atomic<bool>* cancel = nullptr;
  // Names a backend may attach to what it runs (a LAVA job's metadata): "request", "bisection", "build".
  std::map<std::string, std::string> metadata;
  // A backend whose visit lives outside this process (a LAVA job) stores its handle with `save_handle` before
  // it waits, so that a restarted daemon gets it back in `resume` and follows that job instead of starting a
  // second one. Backends whose visits die with the daemon ignore both.
  std::string resume;
  std::function<Status(const std::string& handle)> save_handle;
};

// The most a run log or a boot's console log keeps: its first and last halves, with a line saying how much was left
// out between them (base::HeadTail). A benchmark or a kernel gone wild (100 MB of output, a printk storm) can fill
// neither the data dir nor the daemon's memory, which reads these logs whole to parse them; results, printed last,
// stay in.
constexpr std::size_t k_log_limit = 8 * 1024 * 1024;

struct RunResult {
  int index = 0;   // 0-based run number within the visit
  bool ok = false; // primary metric present and the run exited 0
  std::map<std::string, double> metrics;
  std::string error; // why not ok
  std::filesystem::path log_path;
  std::string log_note; // a line the backend appends to the run's log (metrics dropped past the limits), or empty
  double seconds = 0;
  // Not ok because a file system was full (its log could not be written, or the failed benchmark said "No space
  // left on device" / "Disk quota exceeded"): our side's trouble, retried as infra, never a verdict on the commit.
  bool disk_full = false;
  // Not ok because it ran past its time limit (or a guest stopped answering mid-run): the commit may hang, or the
  // machine did. Retried like infra, never on its own a verdict on the commit.
  bool timed_out = false;
};

enum class VisitOutcome {
  ok,          // booted (or nothing to boot) and ran; individual runs may still have failed
  boot_failed, // panic, oops, no marker, wrong kernel: no sample is accepted
  infra,       // the machine or the backend failed: retry elsewhere or later
  cancelled,   // the lab withdrew the visit (an operator cancelled it there): back to the queue, no attempt used
};

struct VisitResult {
  VisitOutcome outcome = VisitOutcome::ok;
  std::string boot_id; // unique per boot; runs in one boot share its offset
  std::vector<RunResult> runs;
  std::filesystem::path console_log; // kept for every boot
  std::string message;               // one line when not ok
};

class Machine {
public:
  virtual ~Machine() = default;
  [[nodiscard]] virtual const MachineSpec& spec() const = 0;
  // Performs one visit. Errors only for invalid requests; machine trouble is VisitOutcome::infra.
  virtual Result<VisitResult> visit(const VisitRequest& request) = 0;
  // What a visit will need from the machine, checked without one (`bisectctl machine check`): one line per check.
  // Default: a line saying the backend has no check of its own (a visit finds out).
  virtual std::vector<CheckLine> check(const CheckOptions& options);
  // How many visits this machine can run at once (a LAVA device type: its idle devices). Default one.
  [[nodiscard]] virtual int slots() { return 1; }
  // What the machine is ("88 threads 2 sockets Intel(R) Xeon(R) ... with 128G memory"): the lab file's
  // description, else what the backend can find out (an ssh box reads it once). Empty when unknown.
  [[nodiscard]] virtual std::string describe() { return spec().description; }
  // Consecutive infra visits after which the daemon quarantines this machine (no visits until released);
  // 0: never (the default; an ssh box reads settings.quarantine_after).
  [[nodiscard]] virtual int quarantine_after() const { return 0; }
};

// "ok", "boot_failed", "infra", "cancelled".
std::string_view to_string(VisitOutcome outcome);

// Marks a run that is not ok as `disk_full` (saying so first in its error) when a file system was full: the daemon
// could not write its log (`status.output_error` of code infra), or it failed saying "No space left on device" or
// "Disk quota exceeded" in `output`. The backends that spawn the benchmark (local, ssh) call it after judging the run.
void judge_disk_full(RunResult& run, const base::ExitStatus& status, std::string_view output);

// The same for a run whose benchmark ran in a guest (QEMU, LAVA): it failed (`benchmark_failed`) saying the guest's
// file system was full. The host's own log writes there never decide the run: its metrics are read from memory.
void judge_guest_disk_full(RunResult& run, bool benchmark_failed, std::string_view output);

// "NAME-MS-N": a boot id unique in this process and usable in file names (the visit's logs are named by it).
std::string new_boot_id(const std::string& machine);

// Creates the backend named by `spec.backend`; error for an unknown backend or bad settings.
Result<std::unique_ptr<Machine>> make_machine(const MachineSpec& spec);
// The backend names make_machine knows ("local, qemu, ssh, lava"), for lab-file checks and errors.
bool is_known_backend(std::string_view name);
std::string known_backends();

} // namespace bisectd::lab
