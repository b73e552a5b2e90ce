// bisectctl: the command-line client of bisectd (and two offline tools, midpoint and detect).
// The dispatch table below lists every command group; cli/app.cpp does parsing and exit codes.

#include "cli/app.hpp"
#include "cli/cmd_bisect.hpp"
#include "cli/cmd_info.hpp"
#include "cli/cmd_offline.hpp"
#include "cli/cmd_show.hpp"
#include "cli/cmd_tree.hpp"
#include "cli/cmd_wait.hpp"
#include "cli/interrupt.hpp"

#include <unistd.h>

#include <array>
#include <iostream>

namespace {

using namespace bisectd::cli;

// Order = order in --help.
constexpr std::array<Registrar, 7> k_command_groups = {
  register_tree_commands,    // tree add|list|remove
  register_bisect_commands,  // bisect start, bisections
  register_show_commands,    // show, report
  register_wait_command,     // wait
  register_info_commands,    // status, machines, results, noise
  register_midpoint_command, // midpoint (offline)
  register_detect_command,   // detect (offline)
};

} // namespace

int main(int argc, char** argv) {
  install_interrupt_handler();
  std::vector<std::string> args(argv, argv + argc);
  return run_app(args, k_command_groups, Io{std::cout, std::cerr, isatty(STDERR_FILENO) == 1});
}
