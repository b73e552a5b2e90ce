// bisectctl: the command-line client of bisectd (and two offline tools, midpoint and detect).
// cli/commands.cpp lists every command group; cli/app.cpp does parsing and exit codes.

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/interrupt.hpp"

#include <unistd.h>

#include <iostream>

int main(int argc, char** argv) {
  using namespace bisectd::cli;
  install_interrupt_handler();
  std::vector<std::string> args(argv, argv + argc);
  return run_app(args, command_groups(), Io{std::cout, std::cerr, isatty(STDERR_FILENO) == 1});
}
