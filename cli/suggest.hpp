#pragma once
// "Did you mean ...?" for a mistyped command or option: the parser only says what it did not expect, this names
// the nearest word bisectctl knows.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bisectd::cli {

// Edit distance (insertions, deletions, substitutions, and swaps of two neighbours count 1).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The known word nearest to `word`, when it is close enough to be a typo of it (at most 1 edit for short words,
// 2 for longer ones; ties go to the first listed).
std::optional<std::string> nearest_word(const std::string& word, const std::vector<std::string>& known);

// Reads `args` (argv, program name first) against the command tree of `app` and names the first word it cannot
// place: an unknown command ("unknown command 'tree shwo' (did you mean 'tree show'?)") or an option unknown to
// the command it follows (with its nearest option), or a command group given without its command (naming them).
// nullopt when every word is known and a leaf command was reached.
std::optional<std::string> explain_unknown_word(const CLI::App& app, const std::vector<std::string>& args);

} // namespace bisectd::cli
