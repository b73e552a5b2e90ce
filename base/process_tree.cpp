#include "base/process_tree.hpp"

#include "base/fs.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>

namespace bisectd::base {

namespace {

std::mutex g_owner_mutex;
std::string g_owner = "bisectd"; // NOLINT(cert-err58-cpp): set once at start-up
std::atomic<unsigned long> g_sequence{0};

std::string owner() {
  std::lock_guard lock(g_owner_mutex);
  return g_owner;
}

// The value of k_process_tree_variable in /proc/PID/environ, "" when absent or unreadable (another user's).
std::string mark_of(const std::filesystem::path& proc_dir) {
  auto environ = read_file(proc_dir / "environ");
  if (!environ) {
    return "";
  }
  const std::string prefix = std::string(k_process_tree_variable) + "=";
  std::string_view all(*environ);
  while (!all.empty()) {
    auto end = all.find('\0');
    auto entry = all.substr(0, end);
    if (entry.starts_with(prefix)) {
      return std::string(entry.substr(prefix.size()));
    }
    if (end == std::string_view::npos) {
      break;
    }
    all.remove_prefix(end + 1);
  }
  return "";
}

// Kills every process but this one whose mark `matches`; bounded by what /proc lists once.
std::vector<pid_t> kill_marked(const std::function<bool(const std::string&)>& matches) {
  std::vector<pid_t> killed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    auto pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) {
      continue;
    }
    auto mark = mark_of(entry.path());
    if (!mark.empty() && matches(mark) && ::kill(pid, SIGKILL) == 0) {
      killed.push_back(pid);
    }
  }
  return killed;
}

} // namespace

void set_process_owner(const std::string& new_owner) {
  std::lock_guard lock(g_owner_mutex);
  g_owner = new_owner.empty() ? "bisectd" : new_owner;
}

std::string new_process_tree_mark() {
  return owner() + "/" + std::to_string(::getpid()) + "/" + std::to_string(++g_sequence);
}

int kill_process_tree(const std::string& mark) {
  return static_cast<int>(kill_marked([&](const std::string& m) { return m == mark; }).size());
}

std::vector<pid_t> kill_orphans_of_owner(const std::string& of_owner) {
  const std::string ours = of_owner + "/" + std::to_string(::getpid()) + "/";
  const std::string theirs = of_owner + "/";
  return kill_marked([&](const std::string& m) { return m.starts_with(theirs) && !m.starts_with(ours); });
}

} // namespace bisectd::base
