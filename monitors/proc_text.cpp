#include "monitors/proc_text.hpp"

#include <charconv>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace bisectd::monitors {

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

template <typename Fn> void for_each_line(std::string_view text, Fn fn) {
  while (!text.empty()) {
    auto end = text.find('\n');
    fn(text.substr(0, end));
    if (end == std::string_view::npos) {
      break;
    }
    text.remove_prefix(end + 1);
  }
}

// The whole word as an unsigned number; a sign, a fraction or an overflow is not one.
bool to_u64(std::string_view word, std::uint64_t& out) {
  if (word.empty()) {
    return false;
  }
  auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && ptr == word.data() + word.size();
}

bool add_checked(std::uint64_t& sum, std::uint64_t value) {
  if (sum > UINT64_MAX - value) {
    return false;
  }
  sum += value;
  return true;
}

std::string joined(const std::vector<std::string_view>& parts, char separator) {
  std::string out;
  for (auto part : parts) {
    if (!out.empty()) {
      out += separator;
    }
    out += part;
  }
  return out;
}

// A metric name must not carry control bytes or non-ASCII into JSON, logs and mail: such a line is garbage.
bool printable(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  for (char c : name) {
    if (c < '!' || c > '~') {
      return false;
    }
  }
  return true;
}

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The per-CPU table of /proc/interrupts and /proc/softirqs: the header's CPU count, then "LABEL: n n n rest".
// `name` makes the metric's name from the label (without ':') and the words after the counts.
template <typename Name> Counters parse_cpu_table(std::string_view text, Name name) {
  Counters out;
  std::size_t cpus = 0;
  bool header = true;
  for_each_line(text, [&](std::string_view line) {
    auto w = words(line);
    if (header) {
      header = false;
      for (auto word : w) {
        cpus += word.starts_with("CPU") ? 1 : 0;
      }
      return;
    }
    if (cpus == 0 || w.size() < 2 || !w[0].ends_with(':') || w[0].size() < 2) {
      return;
    }
    std::uint64_t sum = 0;
    std::size_t i = 1;
    for (; i < w.size() && i <= cpus; ++i) {
      std::uint64_t value = 0;
      if (!to_u64(w[i], value)) {
        break;
      }
      if (!add_checked(sum, value)) {
        return;
      }
    }
    if (i == 1) {
      return; // no count at all: not a source line
    }
    std::vector<std::string_view> rest(w.begin() + static_cast<std::ptrdiff_t>(i), w.end());
    auto key = name(w[0].substr(0, w[0].size() - 1), rest);
    if (printable(key)) {
      out.emplace(std::move(key), sum); // a repeated label keeps its first line
    }
  });
  return out;
}

} // namespace

Counters parse_vmstat(std::string_view text) {
  Counters out;
  for_each_line(text, [&](std::string_view line) {
    auto w = words(line);
    std::uint64_t value = 0;
    if (w.size() == 2 && printable(w[0]) && to_u64(w[1], value)) {
      out.emplace(std::string(w[0]), value);
    }
  });
  return out;
}

Counters parse_meminfo(std::string_view text) {
  Counters out;
  for_each_line(text, [&](std::string_view line) {
    auto w = words(line);
    std::uint64_t value = 0;
    bool unit_ok = w.size() == 2 || (w.size() == 3 && w[2] == "kB");
    if (unit_ok && w[0].size() > 1 && w[0].ends_with(':') && printable(w[0]) && to_u64(w[1], value)) {
      out.emplace(std::string(w[0].substr(0, w[0].size() - 1)), value);
    }
  });
  return out;
}

Counters parse_interrupts(std::string_view text) {
  return parse_cpu_table(text, [](std::string_view label, const std::vector<std::string_view>& rest) {
    if (rest.empty()) {
      return std::string(label);
    }
    return std::string(label) + ":" + joined(rest, all_digits(label) ? '.' : '_');
  });
}

Counters parse_softirqs(std::string_view text) {
  return parse_cpu_table(text,
                         [](std::string_view label, const std::vector<std::string_view>&) { return std::string(label); });
}

Counters parse_stat(std::string_view text) {
  static constexpr const char* cpu_fields[] = {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"};
  Counters out;
  for_each_line(text, [&](std::string_view line) {
    auto w = words(line);
    std::uint64_t value = 0;
    if (w.size() >= 2 && (w[0] == "intr" || w[0] == "ctxt") && to_u64(w[1], value)) {
      out.emplace(std::string(w[0]), value);
    } else if (!w.empty() && w[0] == "cpu" && !out.contains("cpu.user")) {
      for (std::size_t i = 1; i < w.size() && i <= std::size(cpu_fields) && to_u64(w[i], value); ++i) {
        out[std::string("cpu.") + cpu_fields[i - 1]] = value;
      }
    }
  });
  return out;
}

Counters parse_pid_stat(std::string_view text) {
  // Field numbers of proc(5), from 1 = pid; the words after "(comm)" start at field 3 (state).
  static constexpr std::pair<const char*, std::size_t> fields[] = {{"minflt", 10},  {"cminflt", 11}, {"majflt", 12},
                                                                   {"cmajflt", 13}, {"utime", 14},   {"stime", 15},
                                                                   {"cutime", 16},  {"cstime", 17}};
  auto close = text.rfind(')');
  if (close == std::string_view::npos) {
    return {};
  }
  auto rest = text.substr(close + 1);
  auto w = words(rest.substr(0, rest.find('\n')));
  Counters out;
  for (const auto& [name, number] : fields) {
    std::uint64_t value = 0;
    if (number - 3 >= w.size() || !to_u64(w[number - 3], value)) {
      return {};
    }
    out.emplace(name, value);
  }
  return out;
}

} // namespace bisectd::monitors
