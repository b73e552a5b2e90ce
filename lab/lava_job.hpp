#pragma once
// Backend `lava`, the pure half: its settings, the job definition one visit submits, and the reading of what LAVA
// answers (job state and health, the log's console lines, the `lava` suite's error type) into a visit's verdict.
// The HTTP half is lab/lava_client.hpp, the visit itself lab/lava_machine.hpp.

#include "base/error.hpp"
#include "lab/console.hpp"
#include "lab/machine.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace bisectd::lab {

struct LavaSettings {
  std::string url;                               // settings.url: http://lava.example:8000 (no /api)
  std::filesystem::path token_file;              // settings.token_file: the REST token (first line)
  std::string token;                             // read from token_file by create()
  std::string device_type;                       // settings.device_type
  std::vector<std::string> tags;                 // settings.tags: device tags the job requires
  std::string priority = "medium";               // settings.priority: high | medium | low | 0..100
  std::string visibility = "public";             // settings.visibility: public | personal
  std::chrono::seconds job_timeout{0};           // settings.timeouts.job (0: computed from the visit)
  std::chrono::seconds deploy_timeout{180};      // settings.timeouts.deploy
  std::chrono::seconds boot_timeout{180};        // settings.timeouts.boot: kernel start → boot marker
  std::chrono::seconds connection_timeout{120};  // settings.timeouts.connection
  std::chrono::seconds queue_timeout{1800};      // settings.timeouts.queue: longest wait before it runs
  std::chrono::seconds unreachable_timeout{300}; // settings.timeouts.unreachable: LAVA down for this long
  std::filesystem::path job_template;            // settings.job_template: replaces the built-in definition
  std::string job_template_text;                 // its text, read by create()
  // settings.artifact_url: how the dispatcher fetches kernel and initramfs. "file://" (default): the paths on
  // this host; "http://host:port/PREFIX": files published under settings.publish_dir/<secret>/ and fetched from
  // PREFIX/<secret>/ (bisectd's API serves publish_dir read-only).
  std::string artifact_url = "file://";
  std::filesystem::path publish_dir;              // settings.publish_dir
  std::string callback_url;                       // settings.callback.url: ".../lava/notify" (LAVA adds /{ID})
  std::string callback_token_name;                // settings.callback.token: the LAVA token's description
  std::filesystem::path callback_secret_file;     // settings.callback.secret_file: that token's value (bisectd
                                                  // checks the callback's Authorization against it)
  std::string append;                             // settings.append: extra kernel command line
  std::filesystem::path bench_dir;                // settings.bench_dir (as backend qemu)
  std::filesystem::path busybox = "/bin/busybox"; // settings.busybox
  std::filesystem::path cache_dir;                // settings.cache_dir: initramfs cache
  std::filesystem::path perf = "/usr/bin/perf";   // settings.perf (as backend qemu): packed into the ramdisk of
                                                  // jobs that ask for perf
};

// Parses `spec.settings` (reading no file). Errors (invalid_config) name the machine and every bad key.
Result<LavaSettings> parse_lava_settings(const MachineSpec& spec);

// What one visit's job is made of.
struct LavaJobInputs {
  std::string kernel_url;
  std::string ramdisk_url;
  std::string commit;
  std::string kernel_release;
  std::string primary; // the metric the monitor reports as a test case
  int runs = 1;
  std::chrono::seconds run_timeout{60};
  std::chrono::seconds run_overhead{10}; // lab::run_overhead of the run
  int cpus = 1;
  int memory_mb = 512;
  std::map<std::string, std::string> metadata; // commit, build, request, bisection...
};

// The kernel command line of a LAVA visit.
std::string lava_kernel_command_line(const LavaSettings& settings);

// The job definition (YAML): settings.job_template_text when set, else the built-in one, with every `{{name}}`
// replaced by a YAML-safe (JSON-quoted) value. Names: device_type job_name visibility priority tags timeouts
// metadata notify context kernel_url kernel_image_arg ramdisk_url deploy_timeout boot_timeout test_timeout
// boot_prompt monitor_start monitor_end monitor_pattern. Error (invalid_config): a template names an unknown one.
Result<std::string> render_lava_job(const LavaSettings& settings, const LavaJobInputs& inputs);

// A JSON-quoted string (a valid YAML double-quoted scalar).
std::string yaml_quote(const std::string& text);

// The job as GET jobs/<id>/ describes it.
struct LavaJobStatus {
  std::string state;  // Submitted Scheduling Scheduled Running Canceling Finished
  std::string health; // Unknown Complete Incomplete Canceled
  std::string device; // actual_device
  std::string failure_comment;
};

enum class LavaPhase { waiting, running, finished };
// Submitted/Scheduling/Scheduled → waiting; Running/Canceling → running; Finished → finished.
LavaPhase lava_phase(const LavaJobStatus& status);

// Parses GET jobs/<id>/ (JSON). Error (infra): not a job object.
Result<LavaJobStatus> parse_lava_job(const std::string& json);

// The serial console in a job log (GET jobs/<id>/logs/: one `- {"dt": .., "lvl": .., "msg": ..}` line per
// record, YAML double-quoted): the `msg` of every `target` and `feedback` record, one per line. Other records are
// skipped. `feedback` is what the board printed while no action read it: after the `monitors` test matched its end
// string LAVA powers off reading the rest, so /init's final marker is often only there.
std::string lava_console(const std::string& log_yaml);

// Every record of the log as "lvl: msg" lines (string messages only), for the visit's LAVA log.
std::string lava_log_text(const std::string& log_yaml);

// One YAML double-quoted scalar starting at text[pos] (the opening quote); pos is left after the closing quote.
// Error: unterminated.
Result<std::string> parse_yaml_double_quoted(const std::string& text, std::size_t& pos);

// The `error_type` of the job's `lava`/`job` test case (GET jobs/<id>/tests/ JSON), "" when none.
std::string lava_error_type(const std::string& tests_json);

// The verdict (outcome + message; runs not filled in) on a finished job from its status, its console and the
// error type LAVA gave it. Canceled → cancelled; an Infrastructure error, or an Incomplete job whose kernel never
// printed (download, device or dispatcher trouble) → infra; a crash, no boot marker or another kernel than the
// build's → boot_failed; the job ended before the runs did → infra. Pure; unit-tested.
VisitResult judge_lava_job(const LavaJobStatus& status, const std::string& console, const std::string& error_type,
                           const std::string& kernel_release);

// How many devices in GET devices/ (JSON, paginated `results` or a plain list) are of `device_type`, Idle and of
// health Good or Unknown.
int count_idle_devices(const std::string& devices_json, const std::string& device_type);

} // namespace bisectd::lab
