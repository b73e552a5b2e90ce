#pragma once
// Small string helpers shared by every layer.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::base {

std::vector<std::string> split(std::string_view text, char separator);
std::vector<std::string> split_lines(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string_view trim(std::string_view text);
std::string to_lower(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);

// True for names like tree or job names: [a-z0-9][a-z0-9._-]*, at most 64 characters.
bool is_valid_name(std::string_view name);

// True when `text` has a control character, a space or a shell metacharacter.
bool has_unsafe_chars(std::string_view text);

// `text` usable in a file name: letters, digits, '.', '_' and '-' kept, every other byte '_'.
std::string file_name_safe(std::string_view text);

// Appends the code point `code` (at most 0x10FFFF) to `out` as UTF-8.
void append_utf8(std::string& out, std::uint32_t code);

// The first `n` characters of a sha (or the whole string when shorter).
std::string short_sha(std::string_view sha, std::size_t n = 10);

// A relative change as a signed percentage with one decimal: 0.0123 -> "+1.2%", -0.5 -> "-50.0%"; NaN -> "n/a".
std::string signed_percent(double fraction);

// The one constant-time comparison of a secret (an API token, a callback secret): how long it takes says nothing
// about how much of a guess was right. False when `expected` is empty (no secret configured admits nobody).
bool same_secret(std::string_view expected, std::string_view given);

// A probability as a percentage with one decimal, never rounded up to certainty: 0.9962 -> "99.6%", anything above
// 0.999 (0.9996 would print as "100.0%") -> "> 99.9%"; NaN -> "n/a". The one formatter of a P(culprit).
std::string probability_percent(double probability);

// Quotes `arg` for a POSIX shell: 'it'\''s' style; the one quoting function for anything sent to a remote shell
// (lab/ssh_remote.hpp joins argv with it). Left bare only when made of [A-Za-z0-9_./:,+@%-] (no '=', so a bare
// word is never read as an assignment). A NUL cannot pass through a shell: callers reject it.
std::string shell_quote(std::string_view arg);

// Renders an argv for logs: each element shell-quoted when needed.
std::string describe_argv(const std::vector<std::string>& argv);

// Length of the valid UTF-8 sequence starting at `text[i]` (1 to 4), or 0 when it is invalid there (a stray
// continuation byte, an overlong form, a surrogate, beyond U+10FFFF, or cut off by the end of `text`).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

// Whether LF, TAB and CR LF stay as they are in escape_control: multi-line text (logs, a report mail) keeps them;
// one line (a table cell, a subject, an error message) shows them like every other control character.
enum class LineBreaks { keep, escape };

// `text` safe to print on a terminal, whoever wrote it (a commit, a build log, a daemon's reply): every C0 control
// character, DEL and every byte that is not valid UTF-8 shown as `\xNN`, every C1 control (U+0080..U+009F) as
// `\u00NN`; so no escape sequence (ESC, CSI, OSC) reaches the terminal. A backslash stays as it is: the escapes are
// for the eye, not a reversible encoding. The one such escaper: bisectctl's output goes through it.
std::string escape_control(std::string_view text, LineBreaks line_breaks);

// True for a notify or Cc entry that can go into a mail header: non-empty, at most 320 bytes, an '@', no control
// character (CR/LF would start a header of its own). The one check, used by bisectctl and the API alike.
inline constexpr std::size_t k_max_mail_address = 320;
bool is_mail_address(std::string_view address);

// `text` with the userinfo ("user:token@") removed from every URL in it ("https://u:p@host/x" ->
// "https://host/x"), so credentials in a tree URL reach no mail, report, log or API answer. Text without
// "://" (an scp-like "git@host:path", a path) is returned as it is.
std::string strip_url_userinfo(std::string_view text);

} // namespace bisectd::base
