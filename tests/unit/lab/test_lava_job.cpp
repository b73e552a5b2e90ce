// Backend lava, the pure half: settings, job rendering (golden definitions), state/health mapping, log parsing.
// BISECTD_UPDATE_GOLDEN=1 rewrites tests/golden/lava/*.yaml.

#include "base/fs.hpp"
#include "lab/lava_job.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace bisectd;
using namespace std::chrono_literals;

namespace {

lab::MachineSpec lava_spec(lab::Settings settings) {
  lab::MachineSpec spec;
  spec.name = "lava1";
  spec.group = "lava";
  spec.backend = "lava";
  spec.cpus = 2;
  spec.memory_mb = 512;
  spec.settings = std::move(settings);
  return spec;
}

lab::Settings minimal_settings() {
  return {{"url", lab::scalar_setting("http://127.0.0.1:8000/")},
          {"token_file", lab::scalar_setting("/etc/bisectd/lava-token")},
          {"device_type", lab::scalar_setting("qemu")}};
}

lab::LavaJobInputs inputs() {
  lab::LavaJobInputs in;
  in.kernel_url = "file:///data/builds/abc/bzImage";
  in.ramdisk_url = "file:///data/logs/request-7/lava1-initramfs.cpio.gz";
  in.commit = "0123456789abcdef0123456789abcdef01234567";
  in.kernel_release = "6.1.192-g0123456789ab";
  in.primary = "page_fault.ops_per_sec";
  in.runs = 3;
  in.run_timeout = 60s;
  in.cpus = 2;
  in.memory_mb = 512;
  in.metadata = {{"request", "7"}, {"bisection", "3"}, {"build", "abc"}};
  return in;
}

void check_golden(const std::string& name, const std::string& text) {
  auto path = std::filesystem::path(BISECTD_SOURCE_DIR) / "tests/golden/lava" / (name + ".yaml");
  if (std::getenv("BISECTD_UPDATE_GOLDEN") != nullptr) {
    REQUIRE(base::make_dirs(path.parent_path()));
    REQUIRE(base::write_file_atomic(path, text));
  }
  auto golden = base::read_file(path);
  REQUIRE(golden);
  CHECK(text == *golden);
}

const std::string k_console = "Linux version 6.1.192-g0123456789ab (bisectd@bisectd)\n"
                              "Run /init as init process\n"
                              "BISECTD-BOOT release=6.1.192-g0123456789ab\n"
                              "BISECTD-RUN-BEGIN 0\n"
                              "page_fault.ops_per_sec: 1234.5\n"
                              "BISECTD-RUN-END 0 rc=0 start=1.00 end=3.00\n"
                              "BISECTD-DONE\n";

} // namespace

TEST_CASE("lab::parse_lava_settings", "[lab][lava]") {
  SECTION("defaults") {
    auto settings = lab::parse_lava_settings(lava_spec(minimal_settings()));
    REQUIRE(settings);
    CHECK(settings->url == "http://127.0.0.1:8000");
    CHECK(settings->device_type == "qemu");
    CHECK(settings->priority == "medium");
    CHECK(settings->artifact_url == "file://");
    CHECK(settings->queue_timeout == 1800s);
  }
  SECTION("every key") {
    auto s = minimal_settings();
    s["tags"] = lab::list_setting({"tcg", "x86"});
    s["priority"] = lab::scalar_setting("75");
    s["visibility"] = lab::scalar_setting("personal");
    s["timeouts.job"] = lab::scalar_setting("20m");
    s["timeouts.queue"] = lab::scalar_setting("90s");
    s["artifact_url"] = lab::scalar_setting("http://10.0.0.1:8080/lava/artifacts/");
    s["publish_dir"] = lab::scalar_setting("/var/lib/bisectd/published");
    s["callback.url"] = lab::scalar_setting("http://10.0.0.1:8080/lava/notify");
    s["callback.token"] = lab::scalar_setting("bisectd-callback");
    s["callback.secret_file"] = lab::scalar_setting("/etc/bisectd/lava-callback-secret");
    auto settings = lab::parse_lava_settings(lava_spec(s));
    REQUIRE(settings);
    CHECK(settings->callback_secret_file == "/etc/bisectd/lava-callback-secret");
    CHECK(settings->tags == std::vector<std::string>{"tcg", "x86"});
    CHECK(settings->priority == "75");
    CHECK(settings->job_timeout == 1200s);
    CHECK(settings->queue_timeout == 90s);
    CHECK(settings->artifact_url == "http://10.0.0.1:8080/lava/artifacts");
    CHECK(settings->callback_token_name == "bisectd-callback");
  }
  SECTION("every bad key is reported") {
    lab::Settings s{{"token_file", lab::scalar_setting("tok")},
                    {"priority", lab::scalar_setting("urgent")},
                    {"colour", lab::scalar_setting("red")},
                    {"timeouts.lunch", lab::scalar_setting("1h")},
                    {"artifact_url", lab::scalar_setting("http://x/y")},
                    {"url", lab::scalar_setting("lava.example")},
                    {"callback.url", lab::scalar_setting("http://127.0.0.1:8080/lava/notify")}};
    auto settings = lab::parse_lava_settings(lava_spec(s));
    REQUIRE_FALSE(settings);
    CHECK(settings.error().code == ErrorCode::invalid_config);
    const auto& m = settings.error().message;
    CHECK(m.find("settings.device_type: missing") != std::string::npos);
    CHECK(m.find("settings.priority: expected high, medium, low or 0..100") != std::string::npos);
    CHECK(m.find("settings.colour: unknown key") != std::string::npos);
    CHECK(m.find("settings.timeouts.lunch: unknown timeout") != std::string::npos);
    CHECK(m.find("settings.publish_dir: required with an http artifact_url") != std::string::npos);
    CHECK(m.find("settings.url: expected http://host[:port]") != std::string::npos);
    CHECK(m.find("settings.callback.url: needs callback.token") != std::string::npos);
  }
}

TEST_CASE("lab::render_lava_job", "[lab][lava]") {
  SECTION("the built-in definition, file:// artifacts, no callback") {
    auto settings = lab::parse_lava_settings(lava_spec(minimal_settings()));
    REQUIRE(settings);
    auto job = lab::render_lava_job(*settings, inputs());
    REQUIRE(job);
    check_golden("file-artifacts", *job);
  }
  SECTION("tags, priority, a job timeout and the notify callback") {
    auto s = minimal_settings();
    s["tags"] = lab::list_setting({"tcg"});
    s["priority"] = lab::scalar_setting("high");
    s["timeouts.job"] = lab::scalar_setting("15m");
    s["append"] = lab::scalar_setting("mitigations=off");
    s["callback.url"] = lab::scalar_setting("http://127.0.0.1:8080/lava/notify");
    s["callback.token"] = lab::scalar_setting("bisectd-callback");
    s["callback.secret_file"] = lab::scalar_setting("/etc/bisectd/lava-callback-secret");
    auto settings = lab::parse_lava_settings(lava_spec(s));
    REQUIRE(settings);
    auto job = lab::render_lava_job(*settings, inputs());
    REQUIRE(job);
    check_golden("callback-tags", *job);
  }
  SECTION("values that would break YAML are quoted") {
    auto settings = lab::parse_lava_settings(lava_spec(minimal_settings()));
    REQUIRE(settings);
    auto in = inputs();
    in.metadata["note"] = "a: b\n- c \"d\" #e";
    auto job = lab::render_lava_job(*settings, in);
    REQUIRE(job);
    CHECK(job->find(R"("note": "a: b\n- c \"d\" #e")") != std::string::npos);
  }
  SECTION("a job template replaces the built-in definition") {
    auto settings = lab::parse_lava_settings(lava_spec(minimal_settings()));
    REQUIRE(settings);
    settings->job_template_text = "device_type: {{ device_type }}\nkernel: {{kernel_url}}\n";
    auto job = lab::render_lava_job(*settings, inputs());
    REQUIRE(job);
    CHECK(*job == "device_type: \"qemu\"\nkernel: \"file:///data/builds/abc/bzImage\"\n");
    settings->job_template_text = "x: {{kernel}}\n";
    auto bad = lab::render_lava_job(*settings, inputs());
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "job template: unknown value {{kernel}}");
  }
}

TEST_CASE("lab::lava_phase and parse_lava_job", "[lab][lava]") {
  using lab::LavaPhase;
  for (auto state : {"Submitted", "Scheduling", "Scheduled"}) {
    CHECK(lab::lava_phase({state, "Unknown", "", ""}) == LavaPhase::waiting);
  }
  CHECK(lab::lava_phase({"Running", "Unknown", "qemu01", ""}) == LavaPhase::running);
  CHECK(lab::lava_phase({"Canceling", "Unknown", "qemu01", ""}) == LavaPhase::running);
  CHECK(lab::lava_phase({"Finished", "Complete", "qemu01", ""}) == LavaPhase::finished);

  auto job = lab::parse_lava_job(R"({"id": 3, "state": "Finished", "health": "Incomplete",
    "actual_device": "qemu02", "failure_comment": "auto-login-action timed out"})");
  REQUIRE(job);
  CHECK(job->state == "Finished");
  CHECK(job->health == "Incomplete");
  CHECK(job->device == "qemu02");
  CHECK(job->failure_comment == "auto-login-action timed out");
  auto pending = lab::parse_lava_job(R"({"id": 4, "state": "Submitted", "health": "Unknown", "actual_device": null,
    "failure_comment": null})");
  REQUIRE(pending);
  CHECK(pending->device.empty());
  CHECK_FALSE(lab::parse_lava_job("<html>502</html>"));
}

TEST_CASE("lab::lava_console reads target and feedback lines of a LAVA job log", "[lab][lava]") {
  std::string log =
    R"(- {"dt": "2026-12-02T01:00:00.1", "lvl": "info", "msg": "lava-dispatcher, installed at version: 2023.01"})"
    "\n"
    R"(- {"dt": "2026-12-02T01:00:00.2", "lvl": "debug", "msg": {"boot": {"method": "qemu"}}})"
    "\n"
    R"(- {"dt": "2026-12-02T01:00:01.0", "lvl": "target", "msg": "Linux version 6.1.192"})"
    "\n"
    R"(- {"dt": "2026-12-02T01:00:01.1", "lvl": "target", "msg": "say \"hi\"\tthere \e[0m \x41\u00e9 back\\slash"})"
    "\n"
    R"(- {"dt": "2026-12-02T01:00:01.2", "lvl": "results", "msg": {"case": "job", "result": "pass"}})"
    "\n"
    "not a record\n"
    R"(- {"dt": "2026-12-02T01:00:01.3", "lvl": "info", "msg": "ok: end string found, lava test monitoring stopped"})"
    "\n"
    // After the monitor stopped, LAVA read the rest of the console as feedback while powering off.
    R"(- {"dt": "2026-12-02T01:00:01.4", "lvl": "feedback", "msg": "BISECTD-DONE"})";
  CHECK(lab::lava_console(log) ==
        "Linux version 6.1.192\nsay \"hi\"\tthere \x1b[0m A\xc3\xa9 back\\slash\nBISECTD-DONE\n");
  auto text = lab::lava_log_text(log);
  CHECK(text.find("info: lava-dispatcher, installed at version: 2023.01\n") != std::string::npos);
  CHECK(text.find("debug: {...}\n") != std::string::npos);

  std::string quoted = R"("unterminated \"x)";
  std::size_t pos = 0;
  CHECK_FALSE(lab::parse_yaml_double_quoted(quoted, pos));
}

// Found by tests/fuzz/console: "\xZZ" made std::stoul throw out of lava_console (and so out of a visit).
TEST_CASE("lab::parse_yaml_double_quoted: bad hex escapes are errors, not exceptions", "[lab][lava]") {
  for (std::string bad : {R"("\xZZ")", R"("\x+1")", R"("\u -12")", R"("\u0x12")", R"("\ud800")", R"("\U00110000")",
                          R"("\x4")"}) {
    std::size_t pos = 0;
    auto parsed = lab::parse_yaml_double_quoted(bad, pos);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().message == "bad escape in a double-quoted scalar");
  }
  std::size_t pos = 0;
  CHECK(lab::parse_yaml_double_quoted(R"("\x41\u00e9\U0001F600")", pos) == std::string("A\xc3\xa9\xf0\x9f\x98\x80"));
  // A record with a bad escape is skipped; the records around it are kept.
  CHECK(lab::lava_console("- {\"lvl\": \"target\", \"msg\": \"a\"}\n"
                          "- {\"lvl\": \"target\", \"msg\": \"\\xZZ\"}\n"
                          "- {\"lvl\": \"target\", \"msg\": \"b\"}\n") == "a\nb\n");
}

// Found by tests/fuzz/console: a result whose "name" is not a string made json's value() throw out of
// lava_error_type.
TEST_CASE("lab::lava_error_type: fields of the wrong type are skipped", "[lab][lava]") {
  CHECK(lab::lava_error_type(R"([{"name": 999999999.9}, {"name": ["job"]}, {"name": "job", "metadata": 3}])").empty());
  CHECK(lab::lava_error_type(R"([{"name": 7}, {"name": "job", "metadata": "error_type: Bug"}])") == "Bug");
}

TEST_CASE("lab::lava_error_type", "[lab][lava]") {
  std::string tests = R"({"count": 2, "results": [
    {"name": "validate", "result": "pass", "metadata": "case: validate\ndefinition: lava\n"},
    {"name": "job", "result": "fail", "metadata": "case: job\ndefinition: lava\nerror_msg: 'Unable to fetch file://x'\nerror_type: Infrastructure\nresult: fail\n"}]})";
  CHECK(lab::lava_error_type(tests) == "Infrastructure");
  CHECK(lab::lava_error_type(R"([{"name": "job", "metadata": "case: job\nresult: pass\n"}])").empty());
  CHECK(lab::lava_error_type("garbage").empty());
}

TEST_CASE("lab::judge_lava_job maps health and console to an outcome", "[lab][lava]") {
  using lab::VisitOutcome;
  const std::string release = "6.1.192-g0123456789ab";
  lab::LavaJobStatus complete{"Finished", "Complete", "qemu01", ""};
  lab::LavaJobStatus incomplete{"Finished", "Incomplete", "qemu01", "boot timed out"};
  CHECK(lab::judge_lava_job(complete, k_console, "", release).outcome == VisitOutcome::ok);
  SECTION("canceled: back to the queue") {
    auto r = lab::judge_lava_job({"Finished", "Canceled", "qemu01", ""}, k_console, "Canceled", release);
    CHECK(r.outcome == VisitOutcome::cancelled);
  }
  SECTION("an infrastructure error is infra, whatever the console says") {
    auto r = lab::judge_lava_job(incomplete, "", "Infrastructure", release);
    CHECK(r.outcome == VisitOutcome::infra);
    CHECK(r.message == "LAVA infrastructure error (boot timed out)");
  }
  SECTION("incomplete before the kernel printed anything: infra") {
    auto r = lab::judge_lava_job(incomplete, "", "Job", release);
    CHECK(r.outcome == VisitOutcome::infra);
  }
  SECTION("a kernel that panics, prints no marker, or is not the build's: boot_failed") {
    auto panic =
      lab::judge_lava_job(incomplete, "Linux version 6.1\nKernel panic - not syncing: VFS\n", "Job", release);
    CHECK(panic.outcome == VisitOutcome::boot_failed);
    CHECK(panic.message.find("Kernel panic") != std::string::npos);
    auto silent = lab::judge_lava_job(incomplete, "Linux version 6.1\n", "LAVATimeout", release);
    CHECK(silent.outcome == VisitOutcome::boot_failed);
    auto other = lab::judge_lava_job(complete, k_console, "", "6.1.192-gffffffffffff");
    CHECK(other.outcome == VisitOutcome::boot_failed);
  }
  SECTION("the job ended before the runs did: infra") {
    auto cut = k_console.substr(0, k_console.find("BISECTD-RUN-END"));
    auto r = lab::judge_lava_job(incomplete, cut, "Test", release);
    CHECK(r.outcome == VisitOutcome::infra);
    CHECK(r.message.find("during run 1") != std::string::npos);
  }
}

TEST_CASE("lab::count_idle_devices", "[lab][lava]") {
  std::string devices = R"({"count": 4, "results": [
    {"hostname": "qemu01", "device_type": "qemu", "state": "Idle", "health": "Good"},
    {"hostname": "qemu02", "device_type": "qemu", "state": "Idle", "health": "Unknown"},
    {"hostname": "qemu03", "device_type": "qemu", "state": "Running", "health": "Good"},
    {"hostname": "qemu04", "device_type": "qemu", "state": "Idle", "health": "Maintenance"},
    {"hostname": "bbb01", "device_type": "beaglebone-black", "state": "Idle", "health": "Good"}]})";
  CHECK(lab::count_idle_devices(devices, "qemu") == 2);
  CHECK(lab::count_idle_devices(devices, "beaglebone-black") == 1);
  CHECK(lab::count_idle_devices("{}", "qemu") == 0);
}
