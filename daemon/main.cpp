// bisectd: the daemon. Precedence: command line > BISECTD_* environment > config file > embedded defaults.
#include "base/strings.hpp"
#include "base/units.hpp"
#include "daemon/config/config.hpp"
#include "daemon/daemon.hpp"
#include "daemon/install_paths.hpp"
#include "daemon/log_format.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>

namespace {

using namespace bisectd;

struct Options {
  std::string config_file, data_dir, listen, lab, mail, configs_dir, poll_interval;
  bool verbose = false;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// "mbox:PATH", "smtp://host:port", "smtps://...", "sendmail" or "sendmail:PATH".
Status apply_mail_option(const std::string& mail, daemon::config::Config& config) {
  if (base::starts_with(mail, "smtp://") || base::starts_with(mail, "smtps://")) {
    config.mail.kind = daemon::mail::Transport::Kind::smtp;
    config.mail.smtp_url = mail;
  } else if (base::starts_with(mail, "mbox:")) {
    config.mail.kind = daemon::mail::Transport::Kind::mbox;
    config.mail.mbox_path = mail.substr(5);
  } else if (mail == "sendmail" || base::starts_with(mail, "sendmail:")) {
    config.mail.kind = daemon::mail::Transport::Kind::sendmail;
    if (mail.size() > 9) {
      config.mail.sendmail_path = mail.substr(9);
    }
  } else {
    return make_error(ErrorCode::invalid_config,
                      "--mail: '" + mail + "' must be mbox:PATH, smtp://HOST:PORT or sendmail[:PATH]");
  }
  return {};
}

Result<daemon::config::Config> build_config(const Options& o) {
  daemon::config::Config config;
  auto installed = daemon::installed_configs_dir();
  config.configs_dir =
    env_or("BISECTD_CONFIGS_DIR", installed.empty() ? std::string(BISECTD_SOURCE_DIR "/configs") : installed.string());
  auto config_file = o.config_file.empty() ? env_or("BISECTD_CONFIG", "") : o.config_file;
  if (!config_file.empty()) {
    BISECTD_TRY(daemon::config::load_config_file(config_file, config));
  }
  auto data_dir = o.data_dir.empty() ? env_or("BISECTD_DATA_DIR", "") : o.data_dir;
  if (!data_dir.empty()) {
    config.data_dir = data_dir;
  }
  config.listen = o.listen.empty() ? env_or("BISECTD_LISTEN", config.listen) : o.listen;
  auto lab = o.lab.empty() ? env_or("BISECTD_LAB", "") : o.lab;
  if (!lab.empty()) {
    config.lab_file = std::filesystem::absolute(lab);
  }
  auto mail = o.mail.empty() ? env_or("BISECTD_MAIL", "") : o.mail;
  if (!mail.empty()) {
    BISECTD_TRY(apply_mail_option(mail, config));
  }
  if (!o.configs_dir.empty()) {
    config.configs_dir = o.configs_dir;
  }
  if (!o.poll_interval.empty()) {
    auto interval = base::parse_duration(o.poll_interval);
    if (!interval || *interval < std::chrono::seconds(1)) {
      return make_error(ErrorCode::invalid_config,
                        "--poll-interval: '" + o.poll_interval + "' is not a duration of at least 1s (60s, 5m, 1h)");
    }
    config.poll_interval = std::chrono::duration_cast<std::chrono::seconds>(*interval);
  }
  return config;
}

void setup_logging(bool verbose, int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("bisectd");
  spdlog::set_default_logger(logger);
  spdlog::set_formatter(daemon::log_formatter(verbose));
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::flush_on(spdlog::level::info);
  std::vector<std::string> args(argv, argv + argc);
  utsname uts{};
  uname(&uts);
  spdlog::debug("bisectd {}: {} on {} {}", BISECTD_VERSION, base::describe_argv(args), uts.sysname, uts.release);
}

// The labs look for bench-core in $BISECTD_BENCH_CORE_DIR, then around the executable (the build tree); an
// installed bisectd points them at the installed programs. Done before any thread starts (setenv is not
// thread-safe).
void use_installed_bench_core() {
  if (!env_or("BISECTD_BENCH_CORE_DIR", "").empty()) {
    return;
  }
  if (auto dir = daemon::installed_bench_core_dir(); !dir.empty()) {
    ::setenv("BISECTD_BENCH_CORE_DIR", dir.c_str(), 1);
    spdlog::debug("bench-core: {}", dir.string());
  }
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"bisectd: a performance-bisection daemon for kernel trees"};
  Options o;
  app.add_option("-c,--config", o.config_file, "config file (bisectd.yaml)");
  app.add_option("-d,--data-dir", o.data_dir, "data directory (SQLite file, builds, logs, token)");
  app.add_option("-l,--listen", o.listen, "HTTP API address, default 127.0.0.1:8765");
  app.add_option("--lab", o.lab, "lab file with the machines (default: one local machine)");
  app.add_option("--mail", o.mail, "mail transport: mbox:PATH, smtp://HOST:PORT or sendmail[:PATH]");
  app.add_option("--configs-dir", o.configs_dir, "where job-relative paths fall back to");
  app.add_option("--poll-interval", o.poll_interval,
                 "time between fetches of each tree (60s, 5m, 1h; a bare number is seconds)");
  app.add_flag("-v,--verbose", o.verbose, "debug logging");
  app.set_version_flag("--version", BISECTD_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  setup_logging(o.verbose, argc, argv);
  use_installed_bench_core();
  // The data dir holds the API token, the database and build logs: files 0600, directories 0700.
  ::umask(077);
  if (::geteuid() == 0) {
    spdlog::warn("running as root: the trees' builds and benchmarks run with root's rights (run bisectd as an "
                 "unprivileged user)");
  }
  try {
    auto config = build_config(o);
    if (!config) {
      spdlog::error("{}", config.error().message);
      return 2;
    }
    spdlog::debug("configs dir: {}", config->configs_dir.string());
    auto daemon = daemon::Daemon::create(std::move(*config));
    if (!daemon) {
      spdlog::error("{}", daemon.error().message);
      return 1;
    }
    return (*daemon)->run();
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
