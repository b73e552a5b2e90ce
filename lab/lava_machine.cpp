// LavaMachine::visit: initramfs → URLs → submit (handle saved) → follow → console → verdict (see lava_machine.hpp).

#include "lab/lava_machine.hpp"

#include "base/fs.hpp"
#include "base/hash.hpp"
#include "base/strings.hpp"
#include "lab/console.hpp"
#include "lab/initramfs.hpp"
#include "lab/metrics.hpp"
#include "lab/qemu_command.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <map>

namespace bisectd::lab {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Notify callbacks: a generation per job id, bumped by notify_lava_job.
std::mutex g_notify_mutex;
std::condition_variable g_notify_cv;
std::map<std::int64_t, std::uint64_t> g_notify_generation;

std::uint64_t notify_generation(std::int64_t id) {
  std::lock_guard lock(g_notify_mutex);
  return g_notify_generation[id];
}

// Waits up to `timeout` for a notify of `id` after generation `seen`; true when one came.
bool wait_notify(std::int64_t id, std::uint64_t& seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(g_notify_mutex);
  bool notified = g_notify_cv.wait_for(lock, timeout, [&] { return g_notify_generation[id] != seen; });
  seen = g_notify_generation[id];
  return notified;
}

// 128 random bits as hex: the unguessable directory a published build lives in.
std::string random_secret() {
  std::array<unsigned char, 16> bytes{};
  if (FILE* f = std::fopen("/dev/urandom", "rb"); f != nullptr) {
    auto n = std::fread(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    if (n == bytes.size()) {
      std::string out;
      for (auto b : bytes) {
        static constexpr char k_hex[] = "0123456789abcdef";
        out += k_hex[b >> 4];
        out += k_hex[b & 15];
      }
      return out;
    }
  }
  return base::hash_hex(std::to_string(Clock::now().time_since_epoch().count())) +
         base::hash_hex(std::to_string(reinterpret_cast<std::uintptr_t>(&bytes)));
}

// A LAVA job's boot is named by its job id, so a resumed visit writes to the same logs.
std::string boot_id_of(const std::string& machine, std::int64_t id) {
  return base::file_name_safe(machine) + "-lava-" + std::to_string(id);
}

VisitResult infra(std::string message) {
  VisitResult result;
  result.outcome = VisitOutcome::infra;
  result.message = std::move(message);
  return result;
}

void remove_all(const std::vector<fs::path>& paths) {
  for (const auto& path : paths) {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
}

} // namespace

void notify_lava_job(std::int64_t id) {
  {
    std::lock_guard lock(g_notify_mutex);
    ++g_notify_generation[id];
  }
  g_notify_cv.notify_all();
}

LavaApiSettings lava_api_settings(const std::vector<MachineSpec>& specs) {
  LavaApiSettings out;
  for (const auto& spec : specs) {
    auto settings = spec.backend == "lava" ? parse_lava_settings(spec) : Result<LavaSettings>(LavaSettings{});
    if (!settings || spec.backend != "lava") {
      continue;
    }
    if (out.callback_secret.empty() && !settings->callback_secret_file.empty()) {
      auto secret = base::read_file(settings->callback_secret_file);
      out.callback_secret = secret ? std::string(base::trim(secret->substr(0, secret->find('\n')))) : "";
    }
    if (out.publish_dir.empty() && settings->artifact_url != "file://") {
      out.publish_dir = settings->publish_dir;
    }
  }
  return out;
}

Result<std::unique_ptr<Machine>> LavaMachine::create(const MachineSpec& spec) {
  BISECTD_TRY_ASSIGN(auto settings, parse_lava_settings(spec));
  auto where = "machine " + spec.name + ": ";
  auto token = base::read_file(settings.token_file);
  if (!token) {
    return make_error(ErrorCode::invalid_config, where + "settings.token_file: " + token.error().message);
  }
  settings.token = base::trim(token->substr(0, token->find('\n')));
  if (!settings.job_template.empty()) {
    auto text = base::read_file(settings.job_template);
    if (!text) {
      return make_error(ErrorCode::invalid_config, where + "settings.job_template: " + text.error().message);
    }
    settings.job_template_text = *text;
  }
  if (settings.bench_dir.empty()) {
    settings.bench_dir = find_bench_dir();
  }
  if (settings.cache_dir.empty()) {
    settings.cache_dir = base::default_cache_dir() / "initramfs";
  }
  auto http = make_curl_lava_http(settings.url, settings.token);
  LavaClient client(*http);
  auto version = client.check();
  if (!version) {
    return std::unexpected(version.error().context(where + "LAVA at " + settings.url));
  }
  spdlog::info("machine {}: LAVA {} at {}, device type {}", spec.name, *version, settings.url, settings.device_type);
  return std::make_unique<LavaMachine>(spec, std::move(settings), std::move(http));
}

LavaMachine::LavaMachine(MachineSpec spec, LavaSettings settings, std::unique_ptr<LavaHttp> http, LavaPolling polling)
    : m_spec(std::move(spec)), m_settings(std::move(settings)), m_http(std::move(http)), m_client(*m_http),
      m_polling(polling) {}

std::string LavaMachine::describe() {
  if (!m_spec.description.empty()) {
    return m_spec.description;
  }
  return "LAVA device type " + m_settings.device_type + " at " + m_settings.url;
}

int LavaMachine::slots() {
  std::lock_guard lock(m_mutex);
  auto now = Clock::now();
  if (m_slots_at == Clock::time_point{} || now - m_slots_at >= m_polling.slots_cache) {
    if (auto idle = m_client.idle_devices(m_settings.device_type); idle) {
      m_cached_slots = std::max(1, *idle + m_in_flight);
    } else {
      spdlog::debug("machine {}: devices: {}", m_spec.name, idle.error().message);
    }
    m_slots_at = now;
  }
  return m_cached_slots;
}

std::chrono::seconds LavaMachine::job_timeout(const VisitRequest& request) const {
  if (m_settings.job_timeout.count() > 0) {
    return m_settings.job_timeout;
  }
  return m_settings.deploy_timeout + m_settings.boot_timeout +
         request.runs * (request.run.timeout + run_overhead(request.run)) + 90s;
}

Result<fs::path> LavaMachine::prepare_initrd(const VisitRequest& request) const {
  BISECTD_TRY_ASSIGN(auto job, job_entries(request.run, request.runs));
  auto initrd = request.log_dir / (m_spec.name + "-" + random_secret().substr(0, 8) + "-initramfs.cpio.gz");
  BISECTD_TRY(write_bench_image(m_settings.busybox, m_settings.bench_dir, m_settings.cache_dir, job, initrd,
                                request.run.perf.any() ? m_settings.perf : fs::path()));
  return initrd;
}

Result<std::pair<std::string, std::string>> LavaMachine::artifact_urls(const fs::path& kernel, const fs::path& initrd,
                                                                       std::vector<fs::path>& cleanup) const {
  if (m_settings.artifact_url == "file://") {
    return std::pair{"file://" + fs::absolute(kernel).string(), "file://" + fs::absolute(initrd).string()};
  }
  auto secret = random_secret();
  auto dir = m_settings.publish_dir / secret;
  BISECTD_TRY(base::make_dirs(dir));
  cleanup.push_back(dir);
  std::error_code ec;
  for (const auto& [from, name] : {std::pair{kernel, "bzImage"}, std::pair{initrd, "initramfs.cpio.gz"}}) {
    // The kernel is a build's output: a link (a hard link to a symlink would publish its target) is refused.
    constexpr std::uintmax_t k_publish_cap = 512 * 1024 * 1024;
    BISECTD_TRY(base::open_untrusted(from, k_publish_cap));
    fs::create_hard_link(from, dir / name, ec);
    if (ec) {
      ec.clear();
      if (auto copied = base::copy_untrusted(from, dir / name, k_publish_cap); !copied) {
        return make_error(ErrorCode::infra, "publish " + from.string() + ": " + copied.error().message);
      }
    }
  }
  auto prefix = m_settings.artifact_url + "/" + secret + "/";
  return std::pair{prefix + "bzImage", prefix + "initramfs.cpio.gz"};
}

Result<LavaMachine::Submitted> LavaMachine::submit(const VisitRequest& request) {
  std::error_code ec;
  auto kernel = request.artifact_dir / "bzImage";
  if (!fs::is_regular_file(fs::symlink_status(kernel, ec))) {
    return make_error(ErrorCode::invalid_input, "visit: no bzImage in " + request.artifact_dir.string());
  }
  Submitted submitted;
  BISECTD_TRY_ASSIGN(auto initrd, prepare_initrd(request));
  submitted.cleanup.push_back(initrd);
  auto urls = artifact_urls(kernel, initrd, submitted.cleanup);
  if (!urls) {
    remove_all(submitted.cleanup);
    return std::unexpected(urls.error());
  }
  LavaJobInputs inputs;
  inputs.kernel_url = urls->first;
  inputs.ramdisk_url = urls->second;
  inputs.commit = request.commit;
  inputs.kernel_release = request.kernel_release;
  inputs.primary = request.run.primary;
  inputs.runs = request.runs;
  inputs.run_timeout = request.run.timeout;
  inputs.run_overhead = run_overhead(request.run);
  inputs.cpus = m_spec.cpus;
  inputs.memory_mb = m_spec.memory_mb;
  inputs.metadata = request.metadata;
  inputs.metadata["commit"] = request.commit;
  inputs.metadata["machine"] = m_spec.name;
  auto definition = render_lava_job(m_settings, inputs);
  auto id = definition ? m_client.submit(*definition) : Result<std::int64_t>(std::unexpected(definition.error()));
  if (!id) {
    remove_all(submitted.cleanup);
    return std::unexpected(id.error());
  }
  submitted.id = *id;
  (void)base::write_file_atomic(request.log_dir / (boot_id_of(m_spec.name, *id) + "-definition.yaml"),
                                definition.value());
  return submitted;
}

Result<LavaJobStatus> LavaMachine::follow(std::int64_t id, const VisitRequest& request) {
  auto started = Clock::now();
  auto last_answer = started;
  std::optional<Clock::time_point> running_since;
  auto poll = m_polling.first;
  auto seen = notify_generation(id);
  auto label = "LAVA job " + std::to_string(id);
  std::string last_state;
  while (true) {
    if (request.cancel != nullptr && request.cancel->load()) {
      return make_error(ErrorCode::cancelled, label + ": the daemon is stopping (the job keeps running there)");
    }
    auto now = Clock::now();
    auto status = m_client.job(id);
    if (!status) {
      if (status.error().code == ErrorCode::not_found) {
        return make_error(ErrorCode::infra, label + " is gone: " + status.error().message);
      }
      if (now - last_answer > m_settings.unreachable_timeout) {
        return make_error(ErrorCode::infra, label + ": LAVA did not answer for " +
                                              std::to_string(m_settings.unreachable_timeout.count()) +
                                              "s: " + status.error().message);
      }
      spdlog::debug("{}: {} (still following)", label, status.error().message);
    } else {
      last_answer = now;
      if (status->state != last_state) {
        spdlog::info("machine {}: {} {}{}", m_spec.name, label, status->state,
                     status->device.empty() ? "" : " on " + status->device);
        last_state = status->state;
      }
      auto phase = lava_phase(*status);
      if (phase == LavaPhase::finished) {
        return *status;
      }
      if (phase == LavaPhase::waiting && now - started > m_settings.queue_timeout) {
        (void)m_client.cancel(id);
        return make_error(ErrorCode::infra, label + " still " + status->state + " after " +
                                              std::to_string(m_settings.queue_timeout.count()) + "s: cancelled");
      }
      if (phase == LavaPhase::running && !running_since) {
        running_since = now;
      }
      if (running_since && now - *running_since > job_timeout(request) + 60s) {
        (void)m_client.cancel(id);
        return make_error(ErrorCode::infra, label + " ran past its timeout: cancelled");
      }
    }
    if (wait_notify(id, seen, poll)) {
      poll = m_polling.first;
    } else {
      poll = std::min(poll * 2, m_polling.max);
    }
  }
}

VisitResult LavaMachine::collect(std::int64_t id, const LavaJobStatus& status, const VisitRequest& request) {
  auto boot_id = boot_id_of(m_spec.name, id);
  auto console_path = request.log_dir / (boot_id + "-console.log");
  auto logs = m_client.logs(id);
  if (!logs) {
    auto result = infra("LAVA job " + std::to_string(id) + " " + status.health + ": no log: " + logs.error().message);
    result.boot_id = boot_id;
    return result;
  }
  auto console = lava_console(*logs);
  (void)base::write_file_atomic(console_path, console);
  (void)base::write_file_atomic(request.log_dir / (boot_id + "-lava.log"), lava_log_text(*logs));
  std::string error_type;
  if (status.health != "Complete") {
    auto tests = m_client.tests(id);
    error_type = tests ? lava_error_type(*tests) : "";
  }
  auto result = judge_lava_job(status, console, error_type, request.kernel_release);
  if (result.outcome == VisitOutcome::ok) {
    for (const auto& run : parse_console(console).runs) {
      result.runs.push_back(run_result(run, request, boot_id, "lava"));
    }
  } else {
    result.message =
      "LAVA job " + std::to_string(id) + (status.device.empty() ? "" : " on " + status.device) + ": " + result.message;
  }
  result.boot_id = boot_id;
  result.console_log = console_path;
  return result;
}

Result<VisitResult> LavaMachine::visit(const VisitRequest& request) {
  if (request.log_dir.empty()) {
    return make_error(ErrorCode::invalid_input, "visit: no log_dir");
  }
  BISECTD_TRY(base::make_dirs(request.log_dir));
  std::int64_t id = 0;
  std::vector<fs::path> cleanup;
  if (!request.resume.empty()) {
    auto [end, ec] = std::from_chars(request.resume.data(), request.resume.data() + request.resume.size(), id);
    if (ec != std::errc{} || end != request.resume.data() + request.resume.size() || id <= 0) {
      return make_error(ErrorCode::invalid_input, "visit: resume handle '" + request.resume + "' is not a job id");
    }
    spdlog::info("machine {}: following LAVA job {} again", m_spec.name, id);
  } else {
    auto submitted = submit(request);
    if (!submitted) {
      auto code = submitted.error().code;
      if (code == ErrorCode::invalid_input || code == ErrorCode::invalid_config) { // repeats: not retried
        return std::unexpected(submitted.error());
      }
      return infra("machine " + m_spec.name + ": " + submitted.error().message);
    }
    id = submitted->id;
    cleanup = std::move(submitted->cleanup);
    spdlog::info("machine {}: submitted LAVA job {} for {}", m_spec.name, id, base::short_sha(request.commit));
    if (request.save_handle) {
      if (auto saved = request.save_handle(std::to_string(id)); !saved) {
        (void)m_client.cancel(id);
        remove_all(cleanup);
        return infra("LAVA job " + std::to_string(id) +
                     ": its id could not be stored (cancelled): " + saved.error().message);
      }
    }
  }
  {
    std::lock_guard lock(m_mutex);
    ++m_in_flight;
  }
  auto status = follow(id, request);
  {
    std::lock_guard lock(m_mutex);
    --m_in_flight;
  }
  if (!status) {
    if (status.error().code != ErrorCode::cancelled) {
      remove_all(cleanup);
    }
    auto result = infra(status.error().message);
    result.boot_id = boot_id_of(m_spec.name, id);
    return result;
  }
  auto result = collect(id, *status, request);
  remove_all(cleanup);
  spdlog::info("machine {}: LAVA job {} {}: {}{}", m_spec.name, id, status->health,
               result.outcome == VisitOutcome::ok ? "ok" : "failed: ", result.message);
  return result;
}

} // namespace bisectd::lab
