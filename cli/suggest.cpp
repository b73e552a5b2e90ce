#include "cli/suggest.hpp"

#include "base/strings.hpp"
#include "cli/app.hpp"

#include <algorithm>
#include <numeric>

namespace bisectd::cli {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance, three rows.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearest_word(const std::string& word, const std::vector<std::string>& known) {
  const std::size_t limit = word.size() <= 4 ? 1 : 2;
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : known) {
    auto d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

namespace {

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  auto found = app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(name); });
  return found.empty() ? nullptr : found.front();
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// Long options of `app` and of the commands above it (options fall through to subcommands).
std::vector<std::string> long_options(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* at = &app; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* option : at->get_options()) {
      for (const auto& name : option->get_lnames()) {
        names.push_back("--" + name);
      }
    }
  }
  return names;
}

std::string with_path(const CLI::App& app, const std::string& word) {
  auto path = command_path(&app);
  return path.empty() ? word : path + " " + word;
}

std::string unknown(const std::string& what, const CLI::App& app, const std::string& word,
                    const std::vector<std::string>& known, bool prefix_path) {
  auto line = "unknown " + what + " '" + (prefix_path ? with_path(app, word) : word) + "'";
  if (auto guess = nearest_word(word, known)) {
    line += " (did you mean '" + (prefix_path ? with_path(app, *guess) : *guess) + "'?)";
  }
  return line;
}

} // namespace

std::optional<std::string> explain_unknown_word(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* at = &app;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const auto& word = args[i];
    if (word == "--") {
      return std::nullopt;
    }
    if (word.starts_with("--")) {
      auto name = word.substr(0, word.find('='));
      auto known = long_options(*at);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        auto where = command_path(at);
        auto line = unknown("option", *at, name, known, false);
        return where.empty() ? line : where + ": " + line;
      }
      continue; // a known option; its value, if any, is a plain word below
    }
    if (word.starts_with("-") || subcommand_names(*at).empty()) {
      continue;
    }
    const CLI::App* sub = subcommand_named(*at, word);
    if (sub == nullptr) {
      // The value of a global option (`--server URL status`) is not a command: only words that look like one.
      bool value_of_option = i > 1 && args[i - 1].starts_with("--") && args[i - 1].find('=') == std::string::npos;
      if (value_of_option) {
        continue;
      }
      return unknown("command", *at, word, subcommand_names(*at), true);
    }
    at = sub;
  }
  auto commands = subcommand_names(*at);
  if (commands.empty()) {
    return std::nullopt;
  }
  auto path = command_path(at);
  auto list = base::join(commands, ", ");
  return path.empty() ? "no command given (one of: " + list + "; `bisectctl --help` says more)"
                      : path + ": name one of its commands: " + list;
}

} // namespace bisectd::cli
