#include "lab/ssh_remote.hpp"

#include "base/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace bisectd::lab {

namespace {

std::vector<std::string> pinned_options(const SshSettings& s, std::chrono::seconds connect) {
  std::vector<std::string> out{
    "-o", "BatchMode=yes",
    "-o", "StrictHostKeyChecking=yes",
    "-o", "UserKnownHostsFile=" + s.known_hosts.string(),
    "-o", "GlobalKnownHostsFile=/dev/null",
    "-o", "UpdateHostKeys=no",
    "-o", "ConnectTimeout=" + std::to_string(std::max<long>(1, connect.count())),
    "-o", "ServerAliveInterval=5",
    "-o", "ServerAliveCountMax=3",
    "-o", "LogLevel=ERROR",
  };
  if (!s.identity_file.empty()) {
    out.insert(out.end(), {"-o", "IdentitiesOnly=yes", "-i", s.identity_file.string()});
  }
  return out;
}

std::string host_for_scp(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// "755": chmod's octal mode of the rwx bits only (a setuid bit planted by a tree's build never reaches the box).
std::string fmt_mode(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%03o", mode & 0777U);
  return buf;
}

bool valid_env_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) {
    return false;
  }
  return name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
}

} // namespace

std::vector<std::string> ssh_argv(const SshSettings& s, const std::string& remote, std::chrono::seconds connect) {
  std::vector<std::string> argv = s.ssh;
  argv.push_back("-T");
  auto options = pinned_options(s, connect);
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"-p", std::to_string(s.port), "-l", s.user, "--", s.host, remote});
  return argv;
}

const char* to_string(CopyProtocol protocol) {
  switch (protocol) {
  case CopyProtocol::sftp: return "sftp";
  case CopyProtocol::scp: return "scp -O";
  case CopyProtocol::cat: return "cat";
  }
  return "?";
}

std::vector<std::string> scp_argv(const SshSettings& s, const std::vector<std::string>& local,
                                  const std::string& remote, bool recursive, std::chrono::seconds connect,
                                  CopyProtocol protocol) {
  std::vector<std::string> argv = s.scp;
  argv.insert(argv.end(), {"-q", "-B"});
  if (protocol == CopyProtocol::scp) {
    argv.push_back("-O");
  }
  auto options = pinned_options(s, connect);
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"-P", std::to_string(s.port)});
  if (recursive) {
    argv.push_back("-r");
  }
  argv.push_back("--");
  argv.insert(argv.end(), local.begin(), local.end());
  argv.push_back(s.user + "@" + host_for_scp(s.host) + ":" + remote);
  return argv;
}

std::string cat_copy_line(const std::string& remote_file, unsigned mode) {
  auto slash = remote_file.rfind('/');
  std::string dir = slash == std::string::npos || slash == 0 ? "/" : remote_file.substr(0, slash);
  auto file = base::shell_quote(remote_file);
  return "mkdir -p " + base::shell_quote(dir) + " && cat > " + file + " && chmod " + fmt_mode(mode) + " " + file;
}

Result<std::string> shell_join(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) {
    if (word.find('\0') != std::string::npos) {
      return make_error(ErrorCode::invalid_input, "a NUL byte cannot be sent to a shell");
    }
    line += (line.empty() ? "" : " ") + base::shell_quote(word);
  }
  return line;
}

std::string detached_line(const std::string& line) {
  // Ignored before the fork, so no SIGHUP can arrive between the fork and the child's own trap.
  return "trap '' HUP; sh -c " + base::shell_quote("sleep 1; " + line) + " >/dev/null 2>&1 </dev/null &";
}

Result<std::string> remote_env_command(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env) {
  if (argv.empty()) {
    return make_error(ErrorCode::invalid_input, "run.command: empty");
  }
  std::vector<std::string> words{"env", "--"};
  for (const auto& [name, value] : env) {
    if (!valid_env_name(name)) {
      return make_error(ErrorCode::invalid_input, "run.env: '" + name + "' is not a variable name");
    }
    words.push_back(name + "=" + value);
  }
  if (argv.front().find('=') != std::string::npos) {
    return make_error(ErrorCode::invalid_input, "run.command: a program name with '=' ('" + argv.front() + "')");
  }
  words.insert(words.end(), argv.begin(), argv.end());
  return shell_join(words);
}

Result<std::string> remote_run_command(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env, const std::string& cwd) {
  BISECTD_TRY_ASSIGN(auto line, remote_env_command(argv, env));
  BISECTD_TRY_ASSIGN(auto dir, shell_join({cwd}));
  return "cd " + dir + " && exec " + line;
}

Result<BoxState> parse_probe(std::string_view output) {
  auto lines = base::split_lines(output);
  std::vector<std::string> kept;
  for (const auto& line : lines) {
    auto trimmed = std::string(base::trim(line));
    kept.push_back(trimmed);
  }
  while (!kept.empty() && kept.back().empty()) {
    kept.pop_back();
  }
  if (kept.size() < 2 || kept[0].empty() || kept[1].empty()) {
    return make_error(ErrorCode::infra, "the box did not say its kernel release and boot id");
  }
  return BoxState{kept[0], kept[1], kept.size() > 2 ? kept[2] : ""};
}

std::string describe_box(std::string_view cpuinfo, std::string_view meminfo) {
  int threads = 0;
  std::string model;
  std::set<std::string> sockets;
  for (const auto& line : base::split_lines(cpuinfo)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    auto key = std::string(base::trim(std::string_view(line).substr(0, colon)));
    auto value = std::string(base::trim(std::string_view(line).substr(colon + 1)));
    if (key == "processor") {
      ++threads;
    } else if (key == "model name" && model.empty()) {
      model = value;
    } else if (key == "physical id") {
      sockets.insert(value);
    }
  }
  if (threads == 0) {
    return "";
  }
  auto n_sockets = std::max<std::size_t>(1, sockets.size());
  std::string out = std::to_string(threads) + (threads == 1 ? " thread " : " threads ") + std::to_string(n_sockets) +
                    (n_sockets == 1 ? " socket " : " sockets ") + (model.empty() ? "unknown CPU" : model);
  for (const auto& line : base::split_lines(meminfo)) {
    if (base::starts_with(line, "MemTotal:")) {
      long kb = std::atol(std::string(base::trim(std::string_view(line).substr(9))).c_str());
      long mb = kb / 1024;
      out += " with " + (mb >= 1024 ? std::to_string((mb + 512) / 1024) + "G" : std::to_string(mb) + "M") + " memory";
      break;
    }
  }
  return out;
}

std::string kexec_cmdline(std::string_view box_cmdline, std::string_view visit) {
  std::vector<std::string> kept;
  for (const auto& word : base::split(base::trim(box_cmdline), ' ')) {
    if (word.empty() || base::starts_with(word, "BOOT_IMAGE=") || base::starts_with(word, "initrd=") ||
        base::starts_with(word, "bisectd.boot=")) {
      continue;
    }
    kept.push_back(word);
  }
  kept.push_back("bisectd.boot=" + std::string(visit));
  return base::join(kept, " ");
}

std::string ssh_failure(const base::ExitStatus& status) {
  std::string last;
  for (const auto& line : base::split_lines(status.err.empty() ? status.out : status.err)) {
    auto trimmed = base::trim(line);
    if (!trimmed.empty() && trimmed.find_first_not_of("@") != std::string_view::npos) {
      last = std::string(trimmed.substr(0, 200));
    }
  }
  const auto& err = status.err;
  if (err.find("Host key verification failed") != std::string::npos ||
      err.find("REMOTE HOST IDENTIFICATION HAS CHANGED") != std::string::npos ||
      err.find("No ED25519 host key is known") != std::string::npos ||
      err.find("host key is known") != std::string::npos) {
    return "host key refused (not the one pinned in known_hosts): " + last;
  }
  if (err.find("Permission denied") != std::string::npos) {
    return "authentication failed: " + last;
  }
  if (status.timed_out) {
    return "timed out: " + (last.empty() ? status.describe() : last);
  }
  if (err.find("Connection refused") != std::string::npos || err.find("timed out") != std::string::npos ||
      err.find("No route to host") != std::string::npos || err.find("Could not resolve") != std::string::npos ||
      err.find("Connection closed") != std::string::npos || err.find("Connection reset") != std::string::npos) {
    return "unreachable: " + last;
  }
  return last.empty() ? status.describe() : status.describe() + ": " + last;
}

} // namespace bisectd::lab
