// Job files: yaml-cpp only here and in config.cpp (through YamlReader).
#include "daemon/config/job_file.hpp"

#include "base/loader_env.hpp"
#include "base/strings.hpp"
#include "daemon/config/yaml_reader.hpp"
#include "monitors/monitors.hpp"

namespace bisectd::daemon::config {

namespace {

namespace fs = std::filesystem;

// A relative path resolves against the job file's folder, then the project's configs/ folder.
fs::path resolve_path(const std::string& value, const fs::path& job_path, const fs::path& configs_dir) {
  fs::path p(value);
  if (p.is_absolute()) {
    return p;
  }
  auto beside = job_path.parent_path() / p;
  if (fs::exists(beside)) {
    return fs::absolute(beside);
  }
  for (const auto& root : {configs_dir, configs_dir.parent_path()}) {
    if (!root.empty() && fs::exists(root / p)) {
      return fs::absolute(root / p);
    }
  }
  return fs::absolute(beside);
}

// A job's env map. Loader variables (LD_PRELOAD, GCONV_PATH, ...) are refused: the env reaches the processes that
// build and run the tree's code, and one of these would hand the loader of any of them to the job.
std::map<std::string, std::string> env_map(YamlReader& r, const YAML::Node& section, const std::string& prefix,
                                           const std::string& key) {
  auto env = r.string_map(section, prefix, key).value_or(std::map<std::string, std::string>{});
  auto node = section[key];
  if (!node || !node.IsMap()) {
    return env;
  }
  for (const auto& entry : node) {
    auto name = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (base::is_loader_variable(name)) {
      r.error(entry.first, prefix + "." + key + "." + name,
              "a loader variable is not allowed in a job's environment (it would run code outside the tree's build)");
      env.erase(name);
    }
  }
  return env;
}

void read_build(YamlReader& r, const YAML::Node& root, Job& job, const fs::path& configs_dir) {
  auto build = r.section(root, "", "build", true);
  r.check_keys(build, "build",
               {"recipe", "command", "artifacts", "timeout", "env", "config", "fragment", "extra_options", "kcflags",
                "arch", "modules"});
  auto recipe = r.string(build, "build", "recipe", true).value_or("command");
  if (recipe == "command") {
    job.build.kind = kbuild::RecipeKind::command;
    job.build.command = r.string_list(build, "build", "command", true).value_or(std::vector<std::string>{});
    job.build.artifacts = r.string_list(build, "build", "artifacts").value_or(std::vector<std::string>{});
    if (build["command"] && job.build.command.empty()) {
      r.error(build["command"], "build.command", "must not be empty");
    }
  } else if (recipe == "kernel") {
    job.build.kind = kbuild::RecipeKind::kernel;
    job.build.config = r.string(build, "build", "config").value_or("tinyconfig");
    if (job.build.config.find('/') != std::string::npos || base::ends_with(job.build.config, ".config")) {
      job.build.config = resolve_path(job.build.config, job.path, configs_dir).string();
    }
    if (auto fragment = r.string(build, "build", "fragment")) {
      job.build.fragment = resolve_path(*fragment, job.path, configs_dir);
      if (!fs::exists(job.build.fragment)) {
        r.error(build["fragment"], "build.fragment", "no such file: " + job.build.fragment.string());
      }
    }
    job.build.extra_options = r.string_list(build, "build", "extra_options").value_or(std::vector<std::string>{});
    job.build.kcflags = r.string(build, "build", "kcflags").value_or("");
    job.build.arch = r.string(build, "build", "arch").value_or("x86_64");
    job.build.modules = r.boolean(build, "build", "modules").value_or(false);
  } else {
    r.error(build["recipe"], "build.recipe", "unknown recipe '" + recipe + "' (known: command, kernel)");
  }
  job.build.timeout = r.duration(build, "build", "timeout").value_or(std::chrono::seconds(3600));
  job.build.env = env_map(r, build, "build", "env");
}

void read_run(YamlReader& r, const YAML::Node& root, Job& job) {
  auto run = r.section(root, "", "run", true);
  r.check_keys(run, "run", {"machine_group", "command", "runs", "timeout", "env"});
  job.machine_group = r.string(run, "run", "machine_group").value_or("local");
  job.run.command = r.string_list(run, "run", "command", true).value_or(std::vector<std::string>{});
  if (run["command"] && job.run.command.empty()) {
    r.error(run["command"], "run.command", "must not be empty");
  }
  job.runs = static_cast<int>(r.integer(run, "run", "runs", 1, 1000).value_or(3));
  job.run.timeout = r.duration(run, "run", "timeout").value_or(std::chrono::seconds(600));
  job.run.env = env_map(r, run, "run", "env");
}

// What the kernel did around each run (monitors/monitors.hpp). A kernel job watches everything by default; a
// userspace job's runs share the host with the rest of the system, so it asks for what it wants.
void read_monitors(YamlReader& r, const YAML::Node& root, Job& job) {
  auto names = r.string_list(root, "", "monitors");
  if (!names) {
    if (!root["monitors"] && job.build.kind == kbuild::RecipeKind::kernel) {
      const auto& all = monitors::known_monitors();
      job.run.monitors = std::set<std::string>(all.begin(), all.end());
    }
    return;
  }
  for (const auto& name : *names) {
    if (!monitors::is_known_monitor(name)) {
      r.error(root["monitors"], "monitors",
              "unknown monitor '" + name + "' (known: " + base::join(monitors::known_monitors(), ", ") + ")");
      continue;
    }
    job.run.monitors.insert(name);
  }
}

// perf around each run (lab::RunSpec::Perf): on by default for kernel jobs, as the monitors are; a userspace job's
// runs share the host, so it asks.
void read_perf(YamlReader& r, const YAML::Node& root, Job& job) {
  bool kernel = job.build.kind == kbuild::RecipeKind::kernel;
  auto perf = r.section(root, "", "perf");
  r.check_keys(perf, "perf", {"stat", "profile"});
  job.run.perf.stat = r.boolean(perf, "perf", "stat").value_or(kernel);
  job.run.perf.profile = r.boolean(perf, "perf", "profile").value_or(kernel);
}

void read_metrics(YamlReader& r, const YAML::Node& root, Job& job) {
  auto metrics = r.section(root, "", "metrics", true);
  r.check_keys(metrics, "metrics", {"parse", "primary", "direction", "threshold", "watch"});
  auto parse = r.string(metrics, "metrics", "parse").value_or("lkp");
  if (parse == "json") {
    job.metrics.format = lab::MetricFormat::json;
  } else if (parse != "lkp") {
    r.error(metrics["parse"], "metrics.parse", "unknown format '" + parse + "' (known: lkp, json)");
  }
  job.metrics.primary = r.string(metrics, "metrics", "primary", true).value_or("");
  auto direction = r.string(metrics, "metrics", "direction").value_or("higher_is_better");
  if (direction == "lower_is_better") {
    job.metrics.direction = bisect::Direction::lower_is_better;
  } else if (direction != "higher_is_better") {
    r.error(metrics["direction"], "metrics.direction",
            "must be higher_is_better or lower_is_better, not '" + direction + "'");
  }
  job.metrics.threshold = r.percent(metrics, "metrics", "threshold").value_or(0.02);
  job.metrics.watch = r.string_list(metrics, "metrics", "watch").value_or(std::vector<std::string>{});
  job.run.format = job.metrics.format;
  job.run.primary = job.metrics.primary;
}

void read_bisect(YamlReader& r, const YAML::Node& root, Job& job) {
  auto bisect = r.section(root, "", "bisect");
  r.check_keys(bisect, "bisect", {"method", "delta", "max_runs", "max_builds", "noise"});
  auto method = r.string(bisect, "bisect", "method").value_or("bcb");
  if (method == "classic") {
    job.bisect.method = bisect::Method::classic;
  } else if (method != "bcb") {
    r.error(bisect["method"], "bisect.method", "unknown method '" + method + "' (known: bcb, classic)");
  }
  job.bisect.delta = r.percent(bisect, "bisect", "delta").value_or(0.01);
  job.bisect.max_runs = static_cast<int>(r.integer(bisect, "bisect", "max_runs", 2, 100000).value_or(400));
  job.bisect.max_builds = static_cast<int>(r.integer(bisect, "bisect", "max_builds", 2, 10000).value_or(60));
  job.bisect.noise = r.percent(bisect, "bisect", "noise");
}

void read_verify(YamlReader& r, const YAML::Node& root, Job& job) {
  auto verify = r.section(root, "", "verify");
  r.check_keys(verify, "verify", {"confirm", "pairs", "revert", "layout", "layout_env", "plausibility"});
  job.verify.confirm = r.boolean(verify, "verify", "confirm").value_or(true);
  job.verify.pairs = static_cast<int>(r.integer(verify, "verify", "pairs", 1, 200).value_or(10));
  job.verify.revert = r.boolean(verify, "verify", "revert").value_or(true);
  job.verify.layout = r.boolean(verify, "verify", "layout").value_or(true);
  job.verify.layout_env = env_map(r, verify, "verify", "layout_env");
  job.verify.plausibility = r.boolean(verify, "verify", "plausibility").value_or(true);
}

void read_params(YamlReader& r, const YAML::Node& root, Job& job) {
  auto params = r.section(root, "", "params");
  for (const auto& entry : params) {
    auto name = r.key(entry.first, "params");
    if (!name) {
      continue;
    }
    if (!entry.second.IsScalar()) {
      r.error(entry.second, "params." + *name, "must be a scalar");
      continue;
    }
    job.params.emplace_back(*name, entry.second.as<std::string>());
  }
}

} // namespace

Result<Job> parse_job(const std::string& yaml_text, const fs::path& path, const fs::path& configs_dir) {
  YamlReader r(path.filename().empty() ? fs::path("job.yaml") : path.filename());
  auto root = r.load(yaml_text);
  Job job;
  job.path = path;
  job.yaml = yaml_text;
  r.check_keys(root, "",
               {"name", "testcase", "build", "run", "metrics", "monitors", "perf", "params", "bisect", "verify"});
  job.name = r.string(root, "", "name", true).value_or("");
  if (root["name"] && !base::is_valid_name(job.name)) {
    r.error(root["name"], "name", "'" + job.name + "' is not a valid name ([a-z0-9][a-z0-9._-]*)");
  }
  job.testcase = r.string(root, "", "testcase").value_or(job.name);
  read_build(r, root, job, configs_dir);
  read_run(r, root, job);
  read_metrics(r, root, job);
  read_monitors(r, root, job);
  read_perf(r, root, job);
  read_params(r, root, job);
  read_bisect(r, root, job);
  read_verify(r, root, job);
  if (!r.ok()) {
    return std::unexpected(r.to_error());
  }
  return job;
}

} // namespace bisectd::daemon::config
