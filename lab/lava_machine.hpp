#pragma once
// Backend `lava`: one visit = one LAVA job on a device of settings.device_type. The visit builds the initramfs the
// qemu backend boots (lab/initramfs.hpp), makes kernel and initramfs reachable for the dispatcher
// (settings.artifact_url), submits the definition (lab/lava_job.hpp), stores the job id through
// VisitRequest::save_handle before it waits, follows the job's state by polling with backoff (woken early by
// notify_lava_job, which bisectd's notify callback calls), then reads the console from the job log and judges it
// as the qemu backend does. A request that comes back with `resume` set follows that job and submits nothing.
//
// Faults: LAVA unreachable while following → keeps polling, infra after timeouts.unreachable; still waiting to
// run after timeouts.queue, or running past the job timeout → cancelled on LAVA and infra; the daemon stopping →
// the job keeps running on LAVA (its handle stays stored) and the visit ends at once as infra.

#include "lab/lava_client.hpp"
#include "lab/lava_job.hpp"
#include "lab/machine.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

namespace bisectd::lab {

// Wakes every visit following LAVA job `id` (bisectd's notify callback). Thread-safe; any thread.
void notify_lava_job(std::int64_t id);

struct LavaPolling {
  std::chrono::milliseconds first{500}; // after submission (and after a notify)
  std::chrono::milliseconds max{5000};  // backoff doubles up to this
  std::chrono::seconds slots_cache{5};  // how long slots() trusts its count of idle devices
};

// What bisectd's API serves for the lava machines among `specs`: the notify callback's secret (the content of
// settings.callback.secret_file) and settings.publish_dir; the first machine that sets one wins. Unreadable or
// invalid settings are skipped (make_machine reports them).
struct LavaApiSettings {
  std::string callback_secret;
  std::filesystem::path publish_dir;
};
LavaApiSettings lava_api_settings(const std::vector<MachineSpec>& specs);

class LavaMachine : public Machine {
public:
  // Reads token_file and job_template, asks the server its version with the token. Errors: bad settings
  // (invalid_config), the server unreachable (unreachable) or the token rejected (invalid_config).
  static Result<std::unique_ptr<Machine>> create(const MachineSpec& spec);

  LavaMachine(MachineSpec spec, LavaSettings settings, std::unique_ptr<LavaHttp> http, LavaPolling polling = {});

  [[nodiscard]] const MachineSpec& spec() const override { return m_spec; }
  Result<VisitResult> visit(const VisitRequest& request) override;
  // Idle devices of the type (health Good or Unknown) plus this machine's jobs in flight, at least 1; cached.
  [[nodiscard]] int slots() override;
  [[nodiscard]] std::string describe() override;

private:
  struct Submitted {
    std::int64_t id = 0;
    std::vector<std::filesystem::path> cleanup; // the initramfs, the published directory
  };
  Result<Submitted> submit(const VisitRequest& request);
  Result<std::filesystem::path> prepare_initrd(const VisitRequest& request) const;
  // kernel URL, ramdisk URL; for http publishes both under publish_dir/<secret>/.
  Result<std::pair<std::string, std::string>> artifact_urls(const std::filesystem::path& kernel,
                                                            const std::filesystem::path& initrd,
                                                            std::vector<std::filesystem::path>& cleanup) const;
  // Polls until the job is Finished. Errors: cancelled (the daemon stops), infra (timeouts, LAVA gone).
  Result<LavaJobStatus> follow(std::int64_t id, const VisitRequest& request);
  VisitResult collect(std::int64_t id, const LavaJobStatus& status, const VisitRequest& request);
  [[nodiscard]] std::chrono::seconds job_timeout(const VisitRequest& request) const;

  MachineSpec m_spec;
  LavaSettings m_settings;
  std::unique_ptr<LavaHttp> m_http;
  LavaClient m_client;
  LavaPolling m_polling;
  std::mutex m_mutex;
  int m_in_flight = 0;
  int m_cached_slots = 1;
  std::chrono::steady_clock::time_point m_slots_at{};
};

} // namespace bisectd::lab
