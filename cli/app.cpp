#include "cli/app.hpp"

#include "cli/exit_codes.hpp"
#include "cli/suggest.hpp"

#include <algorithm>
#include <exception>

namespace bisectd::cli {

void Registry::add(CLI::App* command, Handler handler) { m_commands.emplace_back(command, std::move(handler)); }

const std::pair<CLI::App*, Handler>* Registry::selected() const {
  // A command may have subcommands of its own (`bisections` and `bisections rm`): the deepest parsed one wins.
  auto depth = [](const CLI::App* app) {
    int n = 0;
    for (; app != nullptr; app = app->get_parent()) {
      ++n;
    }
    return n;
  };
  const std::pair<CLI::App*, Handler>* chosen = nullptr;
  for (const auto& entry : m_commands) {
    if (entry.first->parsed() && (chosen == nullptr || depth(entry.first) > depth(chosen->first))) {
      chosen = &entry;
    }
  }
  return chosen;
}

std::string command_path(const CLI::App* command) {
  std::string path;
  for (const CLI::App* app = command; app != nullptr && app->get_parent() != nullptr; app = app->get_parent()) {
    path = path.empty() ? app->get_name() : app->get_name() + " " + path;
  }
  return path;
}

namespace {

// The deepest subcommand the parser entered, for error context ("bisect start: --tree is required").
const CLI::App* deepest_parsed(const CLI::App* app) {
  for (const CLI::App* sub : app->get_subcommands()) {
    if (sub->parsed()) {
      return deepest_parsed(sub);
    }
  }
  return app;
}

void add_global_options(CLI::App& app, GlobalOptions& options) {
  app.fallthrough(); // subcommands inherit this: `bisectctl show 3 --server URL` works too
  app.require_subcommand(1);
  app.set_version_flag("--version", BISECTD_VERSION);
  app.add_option("--server", options.server, "bisectd URL (default: $BISECTD_URL, else http://127.0.0.1:8765)");
  app.add_option("--token-file", options.token_file,
                 "file holding the API token for writes (default: $BISECTD_TOKEN_FILE)");
}

int parse_failure(const CLI::App& app, const CLI::ParseError& error, const std::vector<std::string>& args, Io io) {
  std::string where = command_path(deepest_parsed(&app));
  std::string message = where.empty() ? error.what() : where + ": " + error.what();
  if (auto unknown = explain_unknown_word(app, args)) {
    message = *unknown; // names the word and its nearest known one, where the parser only says it was unexpected
  }
  io.err << error_line(Error{ErrorCode::invalid_input, message}) << '\n';
  return static_cast<int>(ExitCode::usage);
}

// Two spellings the parser does not know: `help CMD...` is `CMD... --help`, and `--json` may come before the
// command it applies to (`bisectctl --json status`): every command that prints a reply takes it.
std::vector<std::string> normalised_args(const std::vector<std::string>& args) {
  if (args.size() >= 2 && args[1] == "help") {
    std::vector<std::string> out{args[0]};
    out.insert(out.end(), args.begin() + 2, args.end());
    out.push_back("--help");
    return out;
  }
  std::vector<std::string> out;
  bool json = false;
  auto end = std::find(args.begin(), args.end(), "--");
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (it < end && *it == "--json") {
      json = true;
      continue;
    }
    out.push_back(*it);
  }
  if (json) {
    auto at = std::find(out.begin(), out.end(), "--");
    out.insert(at, "--json");
  }
  return out;
}

int run_selected(const Registry& registry, Io io) {
  const auto* command = registry.selected();
  if (command == nullptr) { // a group without its subcommand is rejected by require_subcommand
    io.err << error_line(Error{ErrorCode::invalid_input, "no command given"}) << '\n';
    return static_cast<int>(ExitCode::usage);
  }
  Status status = command->second();
  if (!status) {
    io.err << error_line(status.error()) << '\n';
    return static_cast<int>(exit_code_for(status.error()));
  }
  return static_cast<int>(ExitCode::ok);
}

} // namespace

int run_app(const std::vector<std::string>& given, std::span<const Registrar> registrars, Io io) {
  auto args = normalised_args(given);
  GlobalOptions options;
  Context context(io, options);
  Registry registry;
  CLI::App app("bisectctl: talk to the bisectd performance-bisection daemon", "bisectctl");
  add_global_options(app, options);
  for (Registrar registrar : registrars) {
    registrar(app, context, registry);
  }
  std::vector<const char*> argv;
  for (const auto& arg : args) {
    argv.push_back(arg.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, args, io);
  }
  try {
    return run_selected(registry, io);
  } catch (const std::exception& e) { // a bug or an unexpected reply shape: still one line, exit 1
    io.err << error_line(Error{ErrorCode::generic, std::string("unexpected failure: ") + e.what()}) << '\n';
    return static_cast<int>(ExitCode::failure);
  }
}

} // namespace bisectd::cli
