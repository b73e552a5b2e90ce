// Backend `lava`: settings, the job definition, the job state and the verdict (see lava_job.hpp; its log:
// lava_log.cpp).

#include "lab/lava_job.hpp"

#include "lab/settings.hpp"

#include <nlohmann/json.hpp>

#include <regex>
#include <set>

namespace bisectd::lab {

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::set<std::string> k_known_keys{
  "url",          "token_file",  "device_type", "tags",   "priority",  "visibility", "timeouts",  "job_template",
  "artifact_url", "publish_dir", "callback",    "append", "bench_dir", "busybox",    "cache_dir", "perf"};
const std::set<std::string> k_timeout_keys{"job", "deploy", "boot", "connection", "queue", "unreachable"};

// The built-in definition: bzImage + initramfs to tmpfs, a QEMU boot up to the kernel starting /init, and a
// `monitors` test from the boot marker to the done marker whose pattern reports the primary metric's lines.
constexpr std::string_view k_builtin_template = R"(device_type: {{device_type}}
job_name: {{job_name}}
visibility: {{visibility}}
priority: {{priority}}
{{tags}}timeouts: {{timeouts}}
context: {{context}}
metadata: {{metadata}}
{{notify}}actions:
- deploy:
    to: tmpfs
    os: oe
    timeout: {seconds: {{deploy_timeout}}}
    images:
      kernel:
        url: {{kernel_url}}
        image_arg: {{kernel_image_arg}}
      ramdisk:
        url: {{ramdisk_url}}
        image_arg: "-initrd {ramdisk}"
- boot:
    method: qemu
    media: tmpfs
    timeout: {seconds: {{boot_timeout}}}
    prompts: [{{boot_prompt}}]
- test:
    timeout: {seconds: {{test_timeout}}}
    monitors:
    - name: bisectd
      start: {{monitor_start}}
      end: {{monitor_end}}
      pattern: {{monitor_pattern}}
)";

std::string regex_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(R"(\^$.|?*+()[]{}/)").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string flow_map(const std::map<std::string, std::string>& values) {
  std::string out = "{";
  for (const auto& [key, value] : values) {
    out += (out.size() > 1 ? ", " : "") + yaml_quote(key) + ": " + yaml_quote(value);
  }
  return out + "}";
}

std::chrono::seconds test_timeout(const LavaJobInputs& inputs) {
  return inputs.runs * (inputs.run_timeout + inputs.run_overhead) + 30s;
}

std::string notify_block(const LavaSettings& settings) {
  if (settings.callback_url.empty()) {
    return "";
  }
  return "notify:\n  criteria: {status: finished}\n  callbacks:\n  - {url: " +
         yaml_quote(settings.callback_url + "/{ID}") + ", method: POST, dataset: minimal, content-type: json" +
         (settings.callback_token_name.empty() ? "" : ", token: " + yaml_quote(settings.callback_token_name)) + "}\n";
}

std::map<std::string, std::string> template_values(const LavaSettings& settings, const LavaJobInputs& inputs) {
  auto job = settings.job_timeout.count() > 0
               ? settings.job_timeout
               : settings.deploy_timeout + settings.boot_timeout + test_timeout(inputs) + 60s;
  std::string tags;
  if (!settings.tags.empty()) {
    tags = "tags: [";
    for (std::size_t i = 0; i < settings.tags.size(); ++i) {
      tags += (i > 0 ? ", " : "") + yaml_quote(settings.tags[i]);
    }
    tags += "]\n";
  }
  auto name = "bisectd " + inputs.commit.substr(0, 12) + (inputs.primary.empty() ? "" : " " + inputs.primary);
  return {
    {"device_type", yaml_quote(settings.device_type)},
    {"job_name", yaml_quote(name)},
    {"visibility", yaml_quote(settings.visibility)},
    {"priority", yaml_quote(settings.priority)},
    {"tags", tags},
    {"timeouts", "{job: {seconds: " + std::to_string(job.count()) +
                   "}, connection: {seconds: " + std::to_string(settings.connection_timeout.count()) + "}}"},
    {"context", "{arch: x86_64, memory: " + std::to_string(inputs.memory_mb) + ", extra_options: [\"-no-reboot\", " +
                  "\"-smp\", \"" + std::to_string(inputs.cpus) + "\"]}"},
    {"metadata", flow_map(inputs.metadata)},
    {"notify", notify_block(settings)},
    {"kernel_url", yaml_quote(inputs.kernel_url)},
    {"kernel_image_arg", yaml_quote("-kernel {kernel} -append \"" + lava_kernel_command_line(settings) + "\"")},
    {"ramdisk_url", yaml_quote(inputs.ramdisk_url)},
    {"deploy_timeout", std::to_string(settings.deploy_timeout.count())},
    {"boot_timeout", std::to_string(settings.boot_timeout.count())},
    {"test_timeout", std::to_string(test_timeout(inputs).count())},
    // The kernel's last line before /init runs: the monitor then sees every marker /init prints.
    {"boot_prompt", yaml_quote("Run /init as init process")},
    {"monitor_start", yaml_quote(std::string(k_boot_marker))},
    {"monitor_end", yaml_quote(std::string(k_done_marker))},
    {"monitor_pattern",
     yaml_quote("(?P<test_case_id>" + regex_escape(inputs.primary.empty() ? "\\S+" : inputs.primary) +
                "): (?P<measurement>[-+]?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?)")},
  };
}

void read_timeouts(SettingsReader& r, LavaSettings& settings) {
  for (const auto& [key, value] : r.group("timeouts")) {
    if (!k_timeout_keys.contains(key)) {
      r.error("timeouts." + key, "unknown timeout (known: job, deploy, boot, connection, queue, unreachable)");
    }
  }
  settings.job_timeout = r.duration("timeouts.job").value_or(settings.job_timeout);
  settings.deploy_timeout = r.duration("timeouts.deploy").value_or(settings.deploy_timeout);
  settings.boot_timeout = r.duration("timeouts.boot").value_or(settings.boot_timeout);
  settings.connection_timeout = r.duration("timeouts.connection").value_or(settings.connection_timeout);
  settings.queue_timeout = r.duration("timeouts.queue").value_or(settings.queue_timeout);
  settings.unreachable_timeout = r.duration("timeouts.unreachable").value_or(settings.unreachable_timeout);
}

void read_priority(SettingsReader& r, LavaSettings& settings) {
  auto priority = r.string("priority");
  if (!priority) {
    return;
  }
  static const std::regex k_number("[0-9]{1,3}");
  if (*priority != "high" && *priority != "medium" && *priority != "low" &&
      !(std::regex_match(*priority, k_number) && std::stoi(*priority) <= 100)) {
    r.error("priority", "expected high, medium, low or 0..100, got '" + *priority + "'");
    return;
  }
  settings.priority = *priority;
}

void read_urls(SettingsReader& r, LavaSettings& settings) {
  static const std::regex k_http("https?://[^/\\s]+(/\\S*)?");
  settings.url = r.string("url", true).value_or("");
  while (!settings.url.empty() && settings.url.back() == '/') {
    settings.url.pop_back();
  }
  if (!settings.url.empty() && !std::regex_match(settings.url, k_http)) {
    r.error("url", "expected http://host[:port], got '" + settings.url + "'");
  }
  settings.artifact_url = r.string("artifact_url").value_or(settings.artifact_url);
  while (settings.artifact_url.size() > 7 && settings.artifact_url.back() == '/') {
    settings.artifact_url.pop_back();
  }
  bool http = std::regex_match(settings.artifact_url, k_http);
  if (settings.artifact_url != "file://" && !http) {
    r.error("artifact_url", "expected file:// or an http(s) URL prefix, got '" + settings.artifact_url + "'");
  }
  settings.publish_dir = r.path("publish_dir", false, false, false).value_or("");
  if (http && settings.publish_dir.empty()) {
    r.error("publish_dir", "required with an http artifact_url (the directory bisectd serves it from)");
  }
  settings.callback_url = r.string("callback.url").value_or("");
  settings.callback_token_name = r.string("callback.token").value_or("");
  settings.callback_secret_file = r.path("callback.secret_file").value_or("");
  for (const auto& [key, value] : r.group("callback")) {
    if (key != "url" && key != "token" && key != "secret_file") {
      r.error("callback." + key, "unknown key (known: url, token, secret_file)");
    }
  }
  if (!settings.callback_url.empty() &&
      (settings.callback_token_name.empty() || settings.callback_secret_file.empty())) {
    r.error("callback.url", "needs callback.token (the LAVA token's description) and callback.secret_file");
  }
}

} // namespace

std::string yaml_quote(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<LavaSettings> parse_lava_settings(const MachineSpec& spec) {
  LavaSettings settings;
  SettingsReader r(spec.name, "lava", spec.settings, spec.origin);
  r.check_keys(k_known_keys);
  read_urls(r, settings);
  settings.token_file = r.path("token_file", true).value_or("");
  settings.device_type = r.string("device_type", true).value_or("");
  settings.tags = r.list("tags", false, true).value_or(std::vector<std::string>{});
  read_priority(r, settings);
  settings.visibility = r.choice("visibility", {"public", "personal"}).value_or(settings.visibility);
  read_timeouts(r, settings);
  settings.job_template = r.path("job_template").value_or("");
  settings.append = r.string("append").value_or("");
  settings.bench_dir = r.path("bench_dir").value_or("");
  settings.busybox = r.path("busybox").value_or(settings.busybox);
  settings.cache_dir = r.path("cache_dir").value_or("");
  settings.perf = r.path("perf").value_or(settings.perf);
  if (spec.cpus < 1 || spec.memory_mb < 64) {
    r.error("cpus", "lava needs cpus >= 1 and memory_mb >= 64");
  }
  if (!r.ok()) {
    return std::unexpected(r.to_error());
  }
  return settings;
}

std::string lava_kernel_command_line(const LavaSettings& settings) {
  std::string line = "console=ttyS0,115200 panic=-1 oops=panic i8042.noaux rdinit=/init";
  return settings.append.empty() ? line : line + " " + settings.append;
}

Result<std::string> render_lava_job(const LavaSettings& settings, const LavaJobInputs& inputs) {
  auto values = template_values(settings, inputs);
  std::string_view text = settings.job_template_text.empty() ? k_builtin_template : settings.job_template_text;
  std::string out;
  std::size_t pos = 0;
  while (true) {
    auto open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      out += text.substr(pos);
      return out;
    }
    auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return make_error(ErrorCode::invalid_config, "job template: unterminated {{");
    }
    std::string name(text.substr(open + 2, close - open - 2));
    while (!name.empty() && name.front() == ' ') {
      name.erase(0, 1);
    }
    while (!name.empty() && name.back() == ' ') {
      name.pop_back();
    }
    auto value = values.find(name);
    if (value == values.end()) {
      return make_error(ErrorCode::invalid_config, "job template: unknown value {{" + name + "}}");
    }
    out += text.substr(pos, open - pos);
    out += value->second;
    pos = close + 2;
  }
}

LavaPhase lava_phase(const LavaJobStatus& status) {
  if (status.state == "Finished") {
    return LavaPhase::finished;
  }
  if (status.state == "Running" || status.state == "Canceling") {
    return LavaPhase::running;
  }
  return LavaPhase::waiting;
}

Result<LavaJobStatus> parse_lava_job(const std::string& text) {
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("state") || !doc["state"].is_string()) {
    return make_error(ErrorCode::infra, "LAVA answered something that is not a job: " + text.substr(0, 200));
  }
  auto str = [&](const char* key) {
    return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : std::string();
  };
  return LavaJobStatus{str("state"), str("health"), str("actual_device"), str("failure_comment")};
}

VisitResult judge_lava_job(const LavaJobStatus& status, const std::string& console, const std::string& error_type,
                           const std::string& kernel_release) {
  VisitResult result;
  auto fail = [&](VisitOutcome outcome, std::string message) {
    result.outcome = outcome;
    result.message = std::move(message);
    return result;
  };
  auto why = status.failure_comment.empty() ? std::string() : " (" + status.failure_comment + ")";
  if (status.health == "Canceled") {
    return fail(VisitOutcome::cancelled, "the LAVA job was canceled" + why);
  }
  if (error_type == "Infrastructure") {
    return fail(VisitOutcome::infra, "LAVA infrastructure error" + why);
  }
  auto log = parse_console(console);
  bool kernel_started = console.find("Linux version ") != std::string::npos;
  if (status.health != "Complete" && !kernel_started && log.crash.empty()) {
    return fail(VisitOutcome::infra, "the LAVA job ended " + status.health + " before the kernel started" + why);
  }
  auto failure = boot_failure(log, kernel_release);
  if (!log.crash.empty() || !failure.empty()) {
    return fail(VisitOutcome::boot_failed, failure + why);
  }
  if (!log.done) {
    return fail(VisitOutcome::infra,
                "the LAVA job ended " + status.health + " during run " + std::to_string(log.runs.size()) + why);
  }
  return result;
}

int count_idle_devices(const std::string& devices_json, const std::string& device_type) {
  auto doc = json::parse(devices_json, nullptr, false);
  const json* list = &doc;
  if (doc.is_object() && doc.contains("results")) {
    list = &doc["results"];
  }
  if (!list->is_array()) {
    return 0;
  }
  int idle = 0;
  for (const auto& device : *list) {
    if (!device.is_object()) {
      continue;
    }
    auto health = device.value("health", "");
    if (device.value("device_type", "") == device_type && device.value("state", "") == "Idle" &&
        (health == "Good" || health == "Unknown")) {
      ++idle;
    }
  }
  return idle;
}

} // namespace bisectd::lab
