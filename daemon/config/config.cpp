// bisectd.yaml and lab files (yaml-cpp through YamlReader), plus defaults derived from the data dir.
#include "daemon/config/config.hpp"

#include "base/fs.hpp"
#include "base/strings.hpp"
#include "daemon/config/yaml_reader.hpp"
#include "lab/machine.hpp"
#include "lab/ssh_remote.hpp"

#include <algorithm>
#include <fstream>
#include <random>

namespace bisectd::daemon::config {

namespace fs = std::filesystem;

namespace {

void read_mail(YamlReader& r, const YAML::Node& root, Config& config) {
  auto mail = r.section(root, "", "mail");
  r.check_keys(mail, "mail",
               {"transport", "mbox", "smtp", "starttls", "user", "password_file", "sendmail", "from", "reported_by",
                "archive_url", "domain", "max_recipients"});
  if (auto transport = r.string(mail, "mail", "transport")) {
    if (*transport == "mbox") {
      config.mail.kind = mail::Transport::Kind::mbox;
    } else if (*transport == "smtp") {
      config.mail.kind = mail::Transport::Kind::smtp;
    } else if (*transport == "sendmail") {
      config.mail.kind = mail::Transport::Kind::sendmail;
    } else {
      r.error(mail["transport"], "mail.transport",
              "unknown transport '" + *transport + "' (known: mbox, smtp, sendmail)");
    }
  }
  if (auto mbox = r.string(mail, "mail", "mbox")) {
    config.mail.mbox_path = *mbox;
  }
  config.mail.smtp_url = r.string(mail, "mail", "smtp").value_or(config.mail.smtp_url);
  config.mail.starttls = r.boolean(mail, "mail", "starttls").value_or(config.mail.starttls);
  config.mail.user = r.string(mail, "mail", "user").value_or(config.mail.user);
  if (auto password_file = r.string(mail, "mail", "password_file")) {
    config.secret_files.push_back(fs::absolute(*password_file));
    auto password = base::read_file(*password_file);
    if (!password) {
      r.error(mail["password_file"], "mail.password_file", password.error().message);
    } else {
      config.mail.password = std::string(base::trim(*password));
    }
  }
  config.mail.sendmail_path = r.string(mail, "mail", "sendmail").value_or(config.mail.sendmail_path);
  config.mail_from = r.string(mail, "mail", "from").value_or(config.mail_from);
  // The report's tags: "Reported-by: <reported_by>" and "Closes: <archive_url><Message-ID>". Both absent by
  // default: a Closes link must lead to a list archive that really received the mail, and a Reported-by tag
  // names an identity people can reach. Set them when the robot mails a real, archived list, e.g.
  //   reported_by: "perf robot <robot@example.org>"
  //   archive_url: https://lore.kernel.org/perf-robot/
  config.reported_by = r.string(mail, "mail", "reported_by").value_or(config.reported_by);
  config.archive_url = r.string(mail, "mail", "archive_url").value_or(config.archive_url);
  config.message_id_domain = r.string(mail, "mail", "domain").value_or(config.message_id_domain);
  config.max_recipients = static_cast<std::size_t>(r.integer(mail, "mail", "max_recipients", 1, 10000).value_or(40));
  if (config.mail.kind == mail::Transport::Kind::smtp && config.mail.smtp_url.empty()) {
    r.error(mail, "mail.smtp", "missing: the transport is smtp (use e.g. smtp://127.0.0.1:25)");
  }
}

// What a `local` machine is: this host's CPU model, threads and memory, as LKP names its test machines.
std::string local_host_description() {
  auto description =
    lab::describe_box(base::read_file("/proc/cpuinfo").value_or(""), base::read_file("/proc/meminfo").value_or(""));
  return description.empty() ? "this host" : description;
}

std::string random_token() {
  std::random_device device;
  std::uniform_int_distribution<int> nibble(0, 15);
  std::string token;
  for (int i = 0; i < 40; ++i) {
    token += "0123456789abcdef"[nibble(device)];
  }
  return token;
}

} // namespace

Status load_config_file(const fs::path& path, Config& config) {
  BISECTD_TRY_ASSIGN(auto text, base::read_file(path));
  return parse_config(text, path, config);
}

Status parse_config(const std::string& text, const fs::path& path, Config& config) {
  YamlReader r(path);
  auto root = r.load(text);
  config.secret_files.push_back(fs::absolute(path)); // its mail.user and paths are no business of the tree's code
  r.check_keys(root, "",
               {"data_dir", "listen", "token_file", "mail", "lab", "poll_interval", "cache_dir", "confirm_runs",
                 "placement_timeout", "fetch_timeout", "sandbox", "public_reads"});
  auto relative_to_file = [&](const std::string& value) {
    fs::path p(value);
    return p.is_absolute() ? p : fs::absolute(path.parent_path() / p);
  };
  if (auto dir = r.string(root, "", "data_dir")) {
    config.data_dir = relative_to_file(*dir);
  }
  config.listen = r.string(root, "", "listen").value_or(config.listen);
  if (auto token = r.string(root, "", "token_file")) {
    config.token_file = relative_to_file(*token);
  }
  if (auto lab = r.string(root, "", "lab")) {
    config.lab_file = relative_to_file(*lab);
  }
  if (auto cache = r.string(root, "", "cache_dir")) {
    config.cache_dir = relative_to_file(*cache);
  }
  config.poll_interval = r.duration(root, "", "poll_interval").value_or(config.poll_interval);
  config.placement_timeout = r.duration(root, "", "placement_timeout").value_or(config.placement_timeout);
  config.fetch_timeout = r.duration(root, "", "fetch_timeout").value_or(config.fetch_timeout);
  config.confirm_runs = static_cast<int>(r.integer(root, "", "confirm_runs", 3, 100).value_or(config.confirm_runs));
  if (auto sandbox = r.string(root, "", "sandbox")) {
    if (*sandbox != "auto" && *sandbox != "bwrap" && *sandbox != "none") {
      r.error(root["sandbox"], "sandbox", "expected auto, bwrap or none, got '" + *sandbox + "'");
    }
    config.sandbox = *sandbox;
  }
  config.public_reads = r.boolean(root, "", "public_reads").value_or(config.public_reads);
  read_mail(r, root, config);
  if (!r.ok()) {
    return make_error(ErrorCode::invalid_config, base::join(r.errors(), "\n"));
  }
  return {};
}

Result<std::vector<lab::MachineSpec>> load_lab_file(const fs::path& path) {
  BISECTD_TRY_ASSIGN(auto text, base::read_file(path));
  return parse_lab(text, path);
}

Result<std::vector<lab::MachineSpec>> parse_lab(const std::string& text, const fs::path& path) {
  YamlReader r(path);
  auto root = r.load(text);
  r.check_keys(root, "", {"machines"});
  std::vector<lab::MachineSpec> machines;
  auto list = root["machines"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    r.error(list ? list : root, "machines", "must be a non-empty list of machines");
    return std::unexpected(r.to_error());
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto m = list[i];
    auto prefix = "machines[" + std::to_string(i) + "]";
    if (!m.IsMap()) {
      r.error(m, prefix, "must be a mapping like {name: m1, backend: local}");
      continue;
    }
    r.check_keys(m, prefix, {"name", "group", "backend", "description", "cpus", "memory_mb", "settings"});
    lab::MachineSpec spec;
    spec.name = r.string(m, prefix, "name", true).value_or("");
    if (m["name"] && !base::is_valid_name(spec.name)) {
      r.error(m["name"], prefix + ".name", "'" + spec.name + "' is not a valid name ([a-z0-9][a-z0-9._-]*)");
    }
    spec.group = r.string(m, prefix, "group").value_or(spec.name);
    spec.backend = r.string(m, prefix, "backend").value_or("local");
    if (m["backend"] && !lab::is_known_backend(spec.backend)) {
      r.error(m["backend"], prefix + ".backend",
              "unknown backend '" + spec.backend + "' (known: " + lab::known_backends() + ")");
    }
    spec.description = r.string(m, prefix, "description").value_or("");
    spec.cpus = static_cast<int>(r.integer(m, prefix, "cpus", 1, 1024).value_or(1));
    spec.memory_mb = static_cast<int>(r.integer(m, prefix, "memory_mb", 64, 1 << 22).value_or(512));
    spec.settings = r.machine_settings(m, prefix);
    spec.origin = r.where(m, prefix);
    if (auto same = std::find_if(machines.begin(), machines.end(), [&](const auto& o) { return o.name == spec.name; });
        m["name"] && same != machines.end()) {
      r.error(m["name"], prefix + ".name",
              "'" + spec.name + "' is already the name of machines[" + std::to_string(same - machines.begin()) + "]");
    }
    machines.push_back(spec);
  }
  if (!r.ok()) {
    return std::unexpected(r.to_error());
  }
  return machines;
}

Status finish_config(Config& config) {
  if (config.data_dir.empty()) {
    return make_error(ErrorCode::invalid_config, "no data dir: use --data-dir DIR or data_dir: in the config file");
  }
  config.data_dir = fs::absolute(config.data_dir);
  BISECTD_TRY(base::make_dirs(config.data_dir));
  if (config.cache_dir.empty()) {
    config.cache_dir = base::default_cache_dir();
  }
  if (config.mail.kind == mail::Transport::Kind::mbox && config.mail.mbox_path.empty()) {
    config.mail.mbox_path = config.data_dir / "mail.mbox";
  }
  if (config.token_file.empty()) {
    config.token_file = config.data_dir / "token";
  }
  if (!fs::exists(config.token_file)) {
    BISECTD_TRY(base::write_file_atomic(config.token_file, random_token() + "\n"));
    fs::permissions(config.token_file, fs::perms::owner_read | fs::perms::owner_write);
  }
  if (!config.lab_file.empty()) {
    BISECTD_TRY_ASSIGN(config.machines, load_lab_file(config.lab_file));
  }
  if (config.machines.empty()) {
    lab::MachineSpec local;
    local.name = "local0";
    local.group = "local";
    local.backend = "local";
    config.machines.push_back(local);
  }
  for (auto& machine : config.machines) {
    if (machine.backend == "local" && machine.description.empty()) {
      machine.description = local_host_description();
    }
  }
  return {};
}

} // namespace bisectd::daemon::config
