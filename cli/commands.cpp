#include "cli/commands.hpp"

#include "cli/cmd_bisect.hpp"
#include "cli/cmd_info.hpp"
#include "cli/cmd_manage.hpp"
#include "cli/cmd_offline.hpp"
#include "cli/cmd_queue.hpp"
#include "cli/cmd_show.hpp"
#include "cli/cmd_tree.hpp"
#include "cli/cmd_wait.hpp"

#include <array>

namespace bisectd::cli {
namespace {

// Order = order in --help. register_manage_commands adds to `tree`, `bisect` and `bisections`: it comes after.
constexpr std::array<Registrar, 9> k_command_groups = {
  register_tree_commands,    // tree add|list|remove
  register_bisect_commands,  // bisect start, bisections
  register_show_commands,    // show, report
  register_wait_command,     // wait
  register_info_commands,    // status, machines, results, noise
  register_queue_commands,   // queue, jobs
  register_manage_commands,  // bisect cancel|retry, bisections rm, tree show|set, detections, logs
  register_midpoint_command, // midpoint (offline)
  register_detect_command,   // detect (offline)
};

} // namespace

std::span<const Registrar> command_groups() { return k_command_groups; }

} // namespace bisectd::cli
