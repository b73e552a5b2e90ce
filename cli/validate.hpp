#pragma once
// Checks of command-line arguments done before anything is sent: failures are usage errors (exit 2).

#include "base/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bisectd::cli {

// A tree or job name: [a-z0-9][a-z0-9._-]* (base::is_valid_name). `what` names the argument.
Status validate_name(const std::string& name, const std::string& what);

// A tree URL as vcs::validate_url accepts it: no spaces, control or shell metacharacters, no leading
// '-', no remote-helper syntax.
Status validate_url(const std::string& url);

// A revision as typed by a user: non-empty, no whitespace or control characters, no leading '-'.
// Anything else (HEAD~3, v6.1^{commit}) is revision syntax the daemon resolves.
Status validate_rev(const std::string& rev, const std::string& what);

// Every --notify entry a mail address that fits in a header (base::is_mail_address: no CR/LF, an '@').
Status validate_notify(const std::vector<std::string>& addresses);

// A positive number of seconds for --poll-interval, --timeout, --interval.
Status validate_seconds(double seconds, const std::string& what);

// "--threshold 2%" -> 0.02 (base::parse_percent); must lie in (0, 1).
Result<double> parse_threshold(const std::string& text);

// An id as typed: digits only, > 0. `what` names it in the error ("bisection id", "request id").
Result<long long> parse_id(const std::string& text, const std::string& what = "bisection id");

// "--poll-interval 5m" -> 300: a positive duration with a unit (60s, 5m, 1h) or bare seconds.
Result<std::int64_t> parse_duration_seconds(const std::string& text, const std::string& what);

} // namespace bisectd::cli
