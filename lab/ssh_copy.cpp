// Copies to an ssh box by whichever protocol it takes: scp over SFTP, scp's legacy protocol, or cat over ssh.
#include "base/fd.hpp"
#include "base/strings.hpp"
#include "lab/ssh_machine.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <utility>

namespace bisectd::lab {

namespace fs = std::filesystem;

namespace {

struct FileCopy {
  fs::path local;
  std::string remote;
  unsigned mode = 0644;
};

std::string joined(const std::string& dir, const std::string& name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

// What a `cat` copy sends, as scp would lay it out: a directory's regular files under its own name (or as `to`
// itself when it is the only source and `to` names no directory), a file into `to` (or as `to`). Links and other
// special files are left out: a link planted by a tree's build is not followed to a file of the daemon's host.
struct CatPlan {
  std::vector<std::string> dirs; // made first, so that a directory without files arrives too
  std::vector<FileCopy> files;
};

Result<CatPlan> cat_plan(const std::vector<std::string>& local, const std::string& to, bool recursive) {
  CatPlan plan;
  bool into = to.ends_with('/') || local.size() > 1;
  for (const auto& source : local) {
    fs::path path(source);
    std::error_code ec;
    auto status = fs::symlink_status(path, ec);
    std::string name = path.filename().string();
    if (fs::is_regular_file(status)) {
      plan.files.push_back({path, into ? joined(to, name) : to, static_cast<unsigned>(status.permissions())});
      continue;
    }
    if (!recursive || !fs::is_directory(status)) {
      return make_error(ErrorCode::io, source + ": not a regular file");
    }
    std::string root = into ? joined(to, name) : to;
    plan.dirs.push_back(root);
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      auto entry_status = it->symlink_status(ec);
      if (!ec && fs::is_regular_file(entry_status)) {
        plan.files.push_back({it->path(), joined(root, fs::relative(it->path(), path).string()),
                              static_cast<unsigned>(entry_status.permissions())});
      }
    }
    if (ec) {
      return make_error(ErrorCode::io, source + ": " + ec.message());
    }
  }
  return plan;
}

// A failure no other protocol gets past: the box refused us, stopped answering, or is full.
bool protocol_independent(const std::string& why) {
  return why.starts_with("host key refused") || why.starts_with("authentication failed") ||
         why.starts_with("timed out") || base::mentions_disk_full(why);
}

} // namespace

std::string SshMachine::copy_to_box(const std::vector<std::string>& local, const std::string& to, bool recursive,
                                    std::chrono::seconds timeout) {
  if (m_copy_protocol) {
    auto why = copy_with(*m_copy_protocol, local, to, recursive, timeout);
    if (!why.empty()) {
      m_copy_protocol.reset(); // the box may have changed: the next copy finds out again
    }
    return why;
  }
  std::vector<std::string> failures;
  for (auto protocol : k_copy_protocols) {
    auto why = copy_with(protocol, local, to, recursive, timeout);
    if (why.empty()) {
      m_copy_protocol = protocol;
      if (!failures.empty()) {
        spdlog::info("ssh {}: copies use {} ({})", m_spec.name, to_string(protocol), base::join(failures, "; "));
      }
      return "";
    }
    if (protocol_independent(why)) {
      return why;
    }
    failures.push_back(std::string(to_string(protocol)) + ": " + why);
  }
  return base::join(failures, "; ");
}

std::string SshMachine::copy_with(CopyProtocol protocol, const std::vector<std::string>& local, const std::string& to,
                                  bool recursive, std::chrono::seconds timeout) {
  if (protocol == CopyProtocol::cat) {
    return cat_copy(local, to, recursive, timeout);
  }
  base::Command cmd;
  cmd.argv = scp_argv(m_settings, local, to, recursive, m_settings.ssh_timeout, protocol);
  cmd.timeout = timeout;
  auto status = m_host->run(cmd);
  if (!status) {
    return status.error().message;
  }
  return status->ok() ? "" : ssh_failure(*status);
}

// One ssh call per file, its content on ssh's stdin: slow for many files, but it needs nothing on the box.
std::string SshMachine::cat_copy(const std::vector<std::string>& local, const std::string& to, bool recursive,
                                 std::chrono::seconds timeout) {
  auto plan = cat_plan(local, to, recursive);
  if (!plan) {
    return plan.error().message;
  }
  if (!plan->dirs.empty()) {
    std::string line = "mkdir -p";
    for (const auto& dir : plan->dirs) {
      line += " " + base::shell_quote(dir);
    }
    base::Command cmd;
    cmd.argv = ssh_argv(m_settings, line, m_settings.ssh_timeout);
    cmd.timeout = timeout;
    auto status = m_host->run(cmd);
    if (!status || !status->ok()) {
      return "mkdir: " + (status ? ssh_failure(*status) : status.error().message);
    }
  }
  for (const auto& file : plan->files) {
    base::Command cmd;
    cmd.argv = ssh_argv(m_settings, cat_copy_line(file.remote, file.mode), m_settings.ssh_timeout);
    cmd.stdin_path = file.local;
    cmd.timeout = timeout;
    auto status = m_host->run(cmd);
    if (!status) {
      return file.local.string() + ": " + status.error().message;
    }
    if (!status->ok()) {
      return file.local.string() + ": " + ssh_failure(*status);
    }
  }
  return "";
}

} // namespace bisectd::lab
