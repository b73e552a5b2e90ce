#pragma once
// What every command needs: the global options, where to print, and a client for the daemon.

#include "base/error.hpp"
#include "cli/http_client.hpp"
#include "cli/terminal_stream.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

namespace bisectd::cli {

inline constexpr const char* k_default_server = "http://127.0.0.1:8765";

struct Io {
  std::ostream& out;
  std::ostream& err;
  bool err_is_tty = false; // progress lines are rewritten in place only on a terminal
};

// The options given before (or after) the subcommand.
struct GlobalOptions {
  std::string server;     // --server; empty: BISECTD_URL, else k_default_server
  std::string token_file; // --token-file; empty: BISECTD_TOKEN_FILE, else no token
};

// Precedence: --server, then $BISECTD_URL, then the default (the env lookup is injectable for tests).
std::string resolve_server(const std::string& option, const char* env_value);

// Precedence: --token-file, then $BISECTD_TOKEN_FILE; empty when neither is set.
std::string resolve_token_file(const std::string& option, const char* env_value);

// Reads the token (trimmed) from `path`. Errors name the file; an empty file is an error.
Result<std::string> read_token(const std::string& path);

class Context {
public:
  Context(Io io, GlobalOptions& options) : m_io(io), m_options(options), m_out(io.out), m_err(io.err) {}

  // stdout and stderr for everything human-readable: control characters made visible (cli/terminal_stream.hpp).
  std::ostream& out() { return m_out; }
  std::ostream& err() { return m_err; }
  // stderr as it is, for bisectctl's own cursor control (the progress line), never for text from elsewhere.
  std::ostream& raw_err() { return m_io.err; }
  [[nodiscard]] bool err_is_tty() const { return m_io.err_is_tty; }

  // The daemon's URL after applying the precedence rules.
  [[nodiscard]] std::string server() const;

  // A client for reads, carrying the token when a token file is configured and readable (logs need it; the
  // daemon keeps connection slots for it). An unreadable file is no error here: most reads need no token.
  [[nodiscard]] HttpClient reader(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  // A client for writes, carrying the token when a token file is configured (errors: unreadable file).
  [[nodiscard]] Result<HttpClient> writer(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  // Prints `value` as indented JSON and a newline, unescaped: JSON escapes control characters itself.
  void print_json(const nlohmann::json& value);

private:
  Io m_io;
  GlobalOptions& m_options;
  TerminalStream m_out;
  TerminalStream m_err;
};

} // namespace bisectd::cli
