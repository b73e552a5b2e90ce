// kernel_lab_tool: drives KernelBuilder from the command line, for the slow `kernel` tests
// (tests/kernel/kernel-test.sh) and by hand; its kernels boot through visit_tool --backend qemu. Output is
// `key: value` lines; exit 0 when the call itself worked (whatever the build outcome), 1 on an error, 2 on bad usage.
//
//   kernel_lab_tool build --tree T --worktree DIR --commit SHA --store DIR --build-root DIR
//                         [--config tinyconfig|FILE] [--fragment FILE] [--extra CONFIG_X=y]... [--timeout S]

#include "base/strings.hpp"
#include "kbuild/build_store.hpp"
#include "kbuild/kernel_builder.hpp"

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

} // namespace

int main(int argc, char** argv) {
  Args args;
  if (argc < 2 || !parse_args(argc, argv, args)) {
    std::cerr << "usage: kernel_lab_tool build [--key value]...\n";
    return 2;
  }
  std::string command = argv[1];
  if (command == "build") {
    return run_build(args);
  }
  std::cerr << "kernel_lab_tool: unknown command '" << command << "'\n";
  return 2;
}
