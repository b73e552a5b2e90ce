#pragma once
// The bisectctl application shell: global options, parsing, dispatch to the chosen subcommand, and the
// mapping of every outcome (help, parse error, command error, exception) to one exit code.

#include "base/error.hpp"
#include "cli/context.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace bisectd::cli {

// Runs one leaf subcommand. Errors are printed by run_app as "bisectctl: error: ..." and map to the
// exit code through exit_code_for().
using Handler = std::function<Status()>;

// Which handler belongs to which leaf subcommand.
class Registry {
public:
  void add(CLI::App* command, Handler handler);

  // The handler of the leaf subcommand that was parsed, with its path ("tree add"); nullptr if none.
  [[nodiscard]] const std::pair<CLI::App*, Handler>* selected() const;

private:
  std::vector<std::pair<CLI::App*, Handler>> m_commands;
};

// A command group adds its subcommands to `app` and their handlers to `registry`. Option values live
// in state captured by the handlers; `context` outlives parsing and running.
using Registrar = void (*)(CLI::App& app, Context& context, Registry& registry);

// Parses `args` (args[0] is the program name), runs the chosen command and returns the exit code:
// 0 ok or help, 1 failure, 2 usage error, 130 interrupted.
int run_app(const std::vector<std::string>& args, std::span<const Registrar> registrars, Io io);

// "tree add" for the leaf subcommand `command` (its names up to, not including, the root).
std::string command_path(const CLI::App* command);

} // namespace bisectd::cli
