#pragma once
// The daemon's configuration: embedded defaults < config file < BISECTD_* environment < command line. This room
// (daemon/config/) is the only yaml-cpp user: the config file, lab files and job files are read here.

#include "base/error.hpp"
#include "daemon/mail/transport.hpp"
#include "lab/machine.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace bisectd::daemon::config {

struct Config {
  std::filesystem::path data_dir; // SQLite file, builds, logs, mirrors, worktrees
  std::string listen = "127.0.0.1:8765";
  std::filesystem::path token_file; // default DATA_DIR/token (generated when absent)
  mail::Transport mail;             // default: mbox at DATA_DIR/mail.mbox
  std::string mail_from = "bisectd <bisectd@localhost>";
  std::string reported_by; // the report's Reported-by: tag; empty: none
  std::string archive_url; // Closes: <archive_url><Message-ID>; empty: no Closes: tag
  std::string message_id_domain = "bisectd.localhost";
  std::size_t max_recipients = 40; // more: only the tree's notify list is mailed
  std::filesystem::path lab_file;  // empty: one `local` machine
  std::vector<lab::MachineSpec> machines;
  std::chrono::seconds poll_interval{60};
  std::filesystem::path cache_dir;              // kernel build dirs, ccache (default ~/.cache/bisectd)
  std::filesystem::path configs_dir;            // where job-relative paths fall back to
  int confirm_runs = 5;                         // runs per side when confirming a detected shift
  std::chrono::seconds placement_timeout{1800}; // a request no machine can take fails (with its bisection)
  // A clone or fetch of a network remote is stopped after this long (vcs::TransferLimits): a remote that stalls
  // holds one fetch thread at most this long, and nothing else.
  std::chrono::seconds fetch_timeout{600};
  // auto | bwrap | none: builds, `local` benchmarks and get_maintainer.pl under bubblewrap (base/sandbox.hpp);
  // auto = bwrap when it works on this host, else none with an error logged (under systemd: refused).
  std::string sandbox = "auto";
  // Files holding secrets the config names (the config file itself, mail.password_file): hidden from the sandbox.
  std::vector<std::filesystem::path> secret_files;
  // GET /api/v1/logs/... without the token. Logs hold what a tree's build and benchmark printed, which may be any
  // file they could read: closed by default. The other reads stay open either way.
  bool public_reads = false;
};

// Reads a bisectd.yaml file over `config`. Every bad key is reported, one per line, "file:line: key: what".
Status load_config_file(const std::filesystem::path& path, Config& config);
// The same from the file's text (`path` names it in errors and anchors relative paths): no file is read.
Status parse_config(const std::string& text, const std::filesystem::path& path, Config& config);

// Reads a lab file (configs/lab/*.yaml) into machine specs.
Result<std::vector<lab::MachineSpec>> load_lab_file(const std::filesystem::path& path);
// The same from the file's text (`path` names it in errors).
Result<std::vector<lab::MachineSpec>> parse_lab(const std::string& text, const std::filesystem::path& path);

// Fills what is still empty from the data dir (token file, mbox, one local machine...).
Status finish_config(Config& config);

} // namespace bisectd::daemon::config
