#pragma once
// Finding every process a command started, wherever it went. A process group is not enough: a build or a
// benchmark can `setsid` a grandchild (or double-fork a daemon) that leaves the group and outlives the timeout,
// and a killed daemon's children keep running while its successor starts the same build again. As Jenkins'
// process-tree killer does, every spawned command carries an environment variable naming its owner (the data
// dir's daemon), the daemon's pid and the command; descendants inherit it, so they can be found in /proc.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace bisectd::base {

// The variable every spawned command carries.
inline constexpr const char* k_process_tree_variable = "BISECTD_PROCESS_TREE";

// Names this process's commands after `owner` (e.g. a hash of the daemon's data dir); "" (the default) = "bisectd".
void set_process_owner(const std::string& owner);

// The value for a new command: "<owner>/<this pid>/<sequence>".
std::string new_process_tree_mark();

// SIGKILLs every process (other than this one) whose environment carries exactly `mark`; returns how many.
int kill_process_tree(const std::string& mark);

// SIGKILLs every process whose mark names `owner` and a daemon pid other than this process's: what a previous
// daemon on the same data dir left running (a build, a QEMU). Returns the pids killed.
std::vector<pid_t> kill_orphans_of_owner(const std::string& owner);

} // namespace bisectd::base
