#include "monitors/perf_text.hpp"

#include "base/strings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <vector>

namespace bisectd::monitors {

namespace {

constexpr std::size_t k_max_symbol = 160;
constexpr std::size_t k_calltrace_frames = 5;     // a path is named by its function and up to 4 callers (LKP)
constexpr std::size_t k_max_calltrace_name = 320; // bytes of frames in one name
constexpr double k_min_calltrace_share = 0.5;     // percent of samples
constexpr std::size_t k_max_calltrace_rows = 100; // the largest paths of one run

// A whole-string finite, non-negative number ("647.79", "12"); nullopt for "<not supported>", "", "1e400", ...
std::optional<double> parse_count(std::string_view text) {
  text = base::trim(text);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

// "36.86%" → 36.86; nullopt for anything else, or a share outside 0..100.
std::optional<double> parse_percent(std::string_view token) {
  if (token.size() < 2 || token.back() != '%') {
    return std::nullopt;
  }
  auto value = parse_count(token.substr(0, token.size() - 1));
  if (!value || *value > 100) {
    return std::nullopt;
  }
  return value;
}

bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// perf prints an unresolved sample as its address: "0xffffffff81001234", "0000000000000000", "[unknown]".
bool is_address(std::string_view symbol) {
  if (symbol == "[unknown]") {
    return true;
  }
  if (symbol.starts_with("0x") || symbol.starts_with("0X")) {
    symbol.remove_prefix(2);
  } else if (symbol.size() < 8) {
    return false; // "add", "face": short words of hex letters are names
  }
  return !symbol.empty() && std::all_of(symbol.begin(), symbol.end(), is_hex_digit);
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == ':' || c == '@' ||
         c == '$' || c == '+' || c == '-';
}

// The fields of one `perf stat -x,` line; an event name with a comma cannot be told apart, and perf quotes none.
struct StatLine {
  std::optional<double> value;
  std::string event;
  std::optional<double> metric; // perf's own derived value (6th field), e.g. "CPUs utilized" for task-clock
  std::string metric_unit;
};

std::optional<StatLine> parse_stat_line(std::string_view line) {
  line = base::trim(line);
  if (line.empty() || line.front() == '#') {
    return std::nullopt;
  }
  auto fields = base::split(line, ',');
  if (fields.size() < 3) {
    return std::nullopt;
  }
  auto event = metric_symbol(base::trim(fields[2]));
  if (!event) {
    return std::nullopt;
  }
  StatLine out{parse_count(fields[0]), *event, std::nullopt, ""};
  if (fields.size() >= 7) {
    out.metric = parse_count(fields[5]);
    out.metric_unit = base::trim(fields[6]);
  }
  return out;
}

void add_ratio(std::map<std::string, double>& out, const std::map<std::string, double>& counts, const char* name,
               const char* numerator, const char* denominator, double scale) {
  auto n = counts.find(numerator);
  auto d = counts.find(denominator);
  if (n != counts.end() && d != counts.end() && d->second > 0) {
    if (double ratio = scale * n->second / d->second; std::isfinite(ratio)) {
      out[std::string("perf-stat.overall.") + name] = ratio;
    }
  }
}

// One line of `perf report --stdio`: the leading percentages (1 or 2), then "[k]"-like, then the symbol.
struct ProfileLine {
  std::vector<double> shares;
  std::string symbol;
};

std::optional<ProfileLine> parse_profile_line(std::string_view line) {
  ProfileLine out;
  line = base::trim(line);
  while (!line.empty() && out.shares.size() < 3) {
    auto space = line.find_first_of(" \t");
    auto share = parse_percent(line.substr(0, space));
    if (!share) {
      break;
    }
    out.shares.push_back(*share);
    line = space == std::string_view::npos ? std::string_view() : base::trim(line.substr(space));
  }
  if (out.shares.empty() || out.shares.size() > 2) {
    return std::nullopt;
  }
  // The dso-kind marker perf puts before the symbol: [k] kernel, [.] user, [g] guest kernel, [u] guest user, ...
  if (line.size() >= 3 && line[0] == '[' && line[2] == ']' && (line.size() == 3 || line[3] == ' ')) {
    line = base::trim(line.substr(3));
  }
  auto symbol = metric_symbol(line);
  if (!symbol) {
    return std::nullopt;
  }
  out.symbol = std::move(*symbol);
  return out;
}

} // namespace

std::optional<std::string> metric_symbol(std::string_view symbol) {
  if (symbol.empty() || symbol.size() > k_max_symbol || is_address(symbol)) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(symbol.size());
  for (char c : symbol) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      return std::nullopt;
    }
    out += is_name_char(c) ? c : '_';
  }
  return out;
}

std::map<std::string, double> perf_stat_metrics(std::string_view csv, double elapsed_seconds) {
  std::map<std::string, double> counts;
  for (const auto& line : base::split_lines(csv)) {
    auto stat = parse_stat_line(line);
    if (!stat || !stat->value) {
      continue;
    }
    counts[stat->event] = *stat->value;
    // perf's own wall time, from task-clock (msec) and "CPUs utilized" = task-clock / elapsed: the run's time on
    // the console also holds perf's start-up (over a second under TCG), which would dilute every rate.
    // A user without the right to count the kernel gets user-space counts, named "task-clock:u".
    bool task_clock = stat->event.substr(0, stat->event.find(':')) == "task-clock";
    if (task_clock && stat->metric && *stat->metric > 0 && stat->metric_unit == "CPUs utilized") {
      elapsed_seconds = *stat->value / 1000.0 / *stat->metric;
    }
  }
  std::map<std::string, double> out;
  if (elapsed_seconds > 0 && std::isfinite(elapsed_seconds)) {
    for (const auto& [event, count] : counts) {
      if (double rate = count / elapsed_seconds; std::isfinite(rate)) {
        out["perf-stat.ps." + event] = rate;
      }
    }
  }
  add_ratio(out, counts, "ipc", "instructions", "cycles", 1);
  add_ratio(out, counts, "cpi", "cycles", "instructions", 1);
  add_ratio(out, counts, "branch-miss-rate%", "branch-misses", "branches", 100);
  add_ratio(out, counts, "dTLB-load-miss-rate%", "dTLB-load-misses", "dTLB-loads", 100);
  add_ratio(out, counts, "iTLB-load-miss-rate%", "iTLB-load-misses", "iTLB-loads", 100);
  add_ratio(out, counts, "cache-miss-rate%", "cache-misses", "cache-references", 100);
  return out;
}

std::map<std::string, double> perf_profile_metrics(std::string_view report) {
  std::map<std::string, double> out;
  for (const auto& line : base::split_lines(report)) {
    if (base::trim(line).starts_with('#')) {
      continue;
    }
    auto entry = parse_profile_line(line);
    if (!entry) {
      continue;
    }
    double self = entry->shares.back();
    out["perf-profile.self.cycles-pp." + entry->symbol] += self;
    if (entry->shares.size() == 2) {
      auto& children = out["perf-profile.children.cycles-pp." + entry->symbol];
      children = std::max(children, entry->shares.front());
    }
  }
  // A self share that rounds to nothing is no evidence of time spent there (perf prints 0.00% for a caller).
  std::erase_if(out, [](const auto& metric) { return metric.second <= 0; });
  return out;
}

namespace {

// A chain line "7.30% read;entry_SYSCALL_64_after_hwframe;...;pvm_irq_enable": its share and its frames, outermost
// first, the unusable ones left out. Nullopt for a symbol's own line ("    16.25%  [k] pvm_irq_enable") and garbage.
struct Chain {
  double share = 0;
  std::vector<std::string> frames;
};

std::optional<Chain> parse_chain_line(std::string_view line) {
  if (line.empty() || line.front() == ' ' || line.front() == '\t') {
    return std::nullopt; // symbol lines are indented, chains are not
  }
  auto space = line.find(' ');
  if (space == std::string_view::npos) {
    return std::nullopt;
  }
  auto share = parse_percent(line.substr(0, space));
  if (!share) {
    return std::nullopt;
  }
  Chain chain{*share, {}};
  for (const auto& frame : base::split(base::trim(line.substr(space + 1)), ';')) {
    if (auto symbol = metric_symbol(frame)) {
      chain.frames.push_back(std::move(*symbol));
    }
  }
  return chain;
}

// The name of the path that ends at frames[end]: that frame, then its callers, while they fit.
std::string calltrace_name(const std::vector<std::string>& frames, std::size_t end) {
  std::string name = frames[end];
  for (std::size_t back = 1; back < k_calltrace_frames && back <= end; ++back) {
    const auto& caller = frames[end - back];
    if (name.size() + 1 + caller.size() > k_max_calltrace_name) {
      break;
    }
    name += "." + caller;
  }
  return name;
}

} // namespace

std::map<std::string, double> perf_calltrace_metrics(std::string_view folded) {
  std::map<std::string, double> paths;
  for (const auto& line : base::split_lines(folded)) {
    auto chain = parse_chain_line(line);
    if (!chain) {
      continue;
    }
    // A recursive chain passes through one path more than once; its samples count once for it.
    std::set<std::string> names;
    for (std::size_t end = 0; end < chain->frames.size(); ++end) {
      names.insert(calltrace_name(chain->frames, end));
    }
    for (const auto& name : names) {
      paths[name] += chain->share;
    }
  }
  std::vector<std::pair<double, std::string>> largest;
  for (auto& [name, share] : paths) {
    if (share >= k_min_calltrace_share && std::isfinite(share)) {
      largest.emplace_back(std::min(share, 100.0), name);
    }
  }
  std::sort(largest.begin(), largest.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  largest.resize(std::min(largest.size(), k_max_calltrace_rows));
  std::map<std::string, double> out;
  for (const auto& [share, name] : largest) {
    out["perf-profile.calltrace.cycles-pp." + name] = share;
  }
  return out;
}

} // namespace bisectd::monitors
