// kernel_lab_tool: drives KernelBuilder and QemuMachine from the command line, for the slow `kernel`
// tests (tests/kernel/kernel-test.sh) and by hand. Output is `key: value` lines; exit 0 when the call
// itself worked (whatever the build/boot outcome), 1 on an error, 2 on bad usage.
//
//   kernel_lab_tool build --tree T --worktree DIR --commit SHA --store DIR --build-root DIR
//                         [--config tinyconfig|FILE] [--fragment FILE] [--extra CONFIG_X=y]... [--timeout S]
//   kernel_lab_tool boot --artifacts DIR --log-dir DIR [--release R] [--runs N] [--append TEXT]
//                        [--boot-timeout S] [--cpus N] [--memory-mb N] [--primary METRIC] [--monitors A,B]
//                        [--perf stat,profile] -- COMMAND ARGS...

#include "base/strings.hpp"
#include "kbuild/build_store.hpp"
#include "kbuild/kernel_builder.hpp"
#include "lab/machine.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace bisectd;

namespace {

struct Args {
  std::map<std::string, std::vector<std::string>> options;
  std::vector<std::string> rest; // after "--"

  [[nodiscard]] std::string get(const std::string& key, const std::string& fallback = "") const {
    auto it = options.find(key);
    return it == options.end() || it->second.empty() ? fallback : it->second.back();
  }
};

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      args.rest.assign(argv + i + 1, argv + argc);
      return true;
    }
    if (!base::starts_with(arg, "--") || i + 1 >= argc) {
      std::cerr << "kernel_lab_tool: bad argument '" << arg << "'\n";
      return false;
    }
    args.options[arg.substr(2)].push_back(argv[++i]);
  }
  return true;
}

std::string_view outcome_name(kbuild::BuildOutcome outcome) {
  switch (outcome) {
  case kbuild::BuildOutcome::ok: return "ok";
  case kbuild::BuildOutcome::failed: return "failed";
  case kbuild::BuildOutcome::infra: return "infra";
  }
  return "?";
}

int fail(const Error& error) {
  // (bisectd::to_string(ErrorCode) is declared in base/error.hpp but not defined yet.)
  std::cout << "error_code: " << (error.code == ErrorCode::invalid_config ? "invalid_config" : "other") << "\n";
  std::cerr << "kernel_lab_tool: error: " << error.message << "\n";
  return 1;
}

int run_build(const Args& args) {
  kbuild::BuildRequest request;
  request.tree = args.get("tree");
  request.commit = args.get("commit");
  request.worktree = args.get("worktree");
  request.recipe.kind = kbuild::RecipeKind::kernel;
  request.recipe.config = args.get("config", "tinyconfig");
  request.recipe.fragment = args.get("fragment");
  request.recipe.timeout = std::chrono::seconds(std::stoi(args.get("timeout", "3600")));
  if (auto it = args.options.find("extra"); it != args.options.end()) {
    request.recipe.extra_options = it->second;
  }
  kbuild::BuildStore store(args.get("store"));
  kbuild::KernelBuilder builder(store, args.get("build-root"));
  auto hash = request.recipe.hash();
  if (!hash) {
    return fail(hash.error());
  }
  auto build_dir = builder.build_dir_for(request.tree, *hash, request.worktree);
  std::cout << "recipe_hash: " << *hash << "\nbuild_dir: " << build_dir.string() << "\n" << std::flush;
  auto result = builder.build(request);
  if (!result) {
    return fail(result.error());
  }
  std::cout << "outcome: " << outcome_name(result->outcome) << "\nreused: " << (result->reused ? "yes" : "no")
            << "\nseconds: " << result->seconds << "\nkernel_release: " << result->kernel_release
            << "\nartifact_dir: " << result->artifact_dir.string() << "\nlog: " << result->log_path.string()
            << "\nmessage: " << result->message << "\nfingerprint: " << result->fingerprint << "\n";
  return 0;
}

int run_boot(const Args& args) {
  lab::MachineSpec spec;
  spec.name = args.get("name", "qemu-test");
  spec.group = "qemu";
  spec.backend = "qemu";
  spec.cpus = std::stoi(args.get("cpus", "1"));
  spec.memory_mb = std::stoi(args.get("memory-mb", "256"));
  for (const char* key : {"append", "boot_timeout", "bench_dir", "accel"}) {
    std::string option = key;
    std::replace(option.begin(), option.end(), '_', '-');
    if (auto value = args.get(option); !value.empty()) {
      spec.settings[key] = lab::scalar_setting(value);
    }
  }
  auto machine = lab::make_machine(spec);
  if (!machine) {
    return fail(machine.error());
  }
  lab::VisitRequest request;
  request.artifact_dir = args.get("artifacts");
  request.kernel_release = args.get("release");
  request.log_dir = args.get("log-dir");
  request.runs = std::stoi(args.get("runs", "1"));
  request.run.command = args.rest;
  request.run.timeout = std::chrono::seconds(std::stoi(args.get("run-timeout", "60")));
  request.run.primary = args.get("primary");
  // --monitors proc-vmstat,vmstat  --perf stat,profile: what the guest collects around each run.
  for (const auto& name : base::split(args.get("monitors"), ',')) {
    if (!name.empty()) {
      request.run.monitors.insert(name);
    }
  }
  auto perf = "," + args.get("perf") + ",";
  request.run.perf = {.stat = perf.find(",stat,") != std::string::npos,
                      .profile = perf.find(",profile,") != std::string::npos};
  auto result = (*machine)->visit(request);
  if (!result) {
    return fail(result.error());
  }
  std::cout << "outcome: " << lab::to_string(result->outcome) << "\nmessage: " << result->message
            << "\nboot_id: " << result->boot_id << "\nconsole_log: " << result->console_log.string()
            << "\nruns: " << result->runs.size() << "\n";
  for (const auto& run : result->runs) {
    std::cout << "run" << run.index << ".ok: " << (run.ok ? 1 : 0) << "\n";
    for (const auto& [name, value] : run.metrics) {
      std::cout << "run" << run.index << "." << name << ": " << value << "\n";
    }
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  Args args;
  if (argc < 2 || !parse_args(argc, argv, args)) {
    std::cerr << "usage: kernel_lab_tool build|boot [--key value]... [-- command...]\n";
    return 2;
  }
  std::string command = argv[1];
  if (command == "build") {
    return run_build(args);
  }
  if (command == "boot") {
    return run_boot(args);
  }
  std::cerr << "kernel_lab_tool: unknown command '" << command << "'\n";
  return 2;
}
