#include "lab/ssh_check.hpp"

#include "base/strings.hpp"

#include <charconv>
#include <cstdio>

namespace bisectd::lab {

namespace {

constexpr std::string_view k_separator = "@@";
// What a visit writes to kernel_dir: a kernel with its modules, or a userspace job's artifacts.
constexpr std::int64_t k_kernel_free_kb = 1024 * 1024;
constexpr std::int64_t k_artifacts_free_kb = 128 * 1024;

template <typename T>
std::optional<T> number(std::string_view text) {
  text = base::trim(text);
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// df -Pk's data line: "FS 1024-blocks Used Available Capacity Mounted-on"; the fourth field.
std::optional<std::int64_t> available_kb(std::string_view df) {
  auto lines = base::split_lines(df);
  if (lines.size() < 2) {
    return std::nullopt;
  }
  std::vector<std::string> fields;
  for (const auto& field : base::split(lines.back(), ' ')) {
    if (!field.empty()) {
      fields.push_back(field);
    }
  }
  return fields.size() >= 4 ? number<std::int64_t>(fields[3]) : std::nullopt;
}

std::string gigabytes(std::int64_t kb) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1fG", static_cast<double>(kb) / (1024.0 * 1024.0));
  return buffer;
}

// "integrity" from "none [integrity] confidentiality": the mode in brackets.
std::string lockdown_mode(std::string_view text) {
  auto open = text.find('[');
  auto close = text.find(']', open);
  return open == std::string_view::npos || close == std::string_view::npos
           ? ""
           : std::string(text.substr(open + 1, close - open - 1));
}

CheckLine kexec_line(const BoxFacts& f) {
  CheckLine line{"kexec", false, true, ""};
  if (f.kexec.empty()) {
    line.detail = "no kexec on the box's PATH: install kexec-tools (Debian/Ubuntu: apt install kexec-tools), or use "
                  "install: reboot";
    return line;
  }
  auto mode = lockdown_mode(f.lockdown);
  if (!mode.empty() && mode != "none") {
    line.detail = "the kernel is locked down (" + mode + ", Secure Boot): kexec_load is refused; turn Secure Boot "
                  "off or boot with lockdown=none, or use install: reboot";
    return line;
  }
  if (f.kexec_load_disabled.value_or(0) != 0) {
    line.detail = "kernel.kexec_load_disabled is 1: it stays set until the next boot; remove it from sysctl.d, "
                  "reboot, or use install: reboot";
    return line;
  }
  line.ok = true;
  line.detail = f.kexec + (mode.empty() ? "" : ", lockdown none") + ", kexec_load allowed";
  return line;
}

} // namespace

std::string box_check_command(const std::string& kernel_dir) {
  auto dir = base::shell_quote(kernel_dir);
  std::string sep = "; echo " + std::string(k_separator) + "; ";
  return "exec 2>/dev/null; id -u" + sep + "command -v kexec" + sep + "cat /sys/kernel/security/lockdown" + sep +
         "cat /proc/sys/kernel/kexec_load_disabled" + sep + "command -v perf" + sep + "mkdir -p " + dir +
         " && df -Pk " + dir;
}

BoxFacts parse_box_check(std::string_view output) {
  std::vector<std::string> sections(6);
  std::size_t index = 0;
  for (const auto& line : base::split_lines(output)) {
    if (base::trim(line) == k_separator) {
      ++index;
    } else if (index < sections.size()) {
      sections[index] += line + "\n";
    }
  }
  BoxFacts f;
  f.uid = number<long>(sections[0]);
  f.kexec = std::string(base::trim(sections[1]));
  f.lockdown = std::string(base::trim(sections[2]));
  f.kexec_load_disabled = number<long>(sections[3]);
  f.perf = std::string(base::trim(sections[4]));
  f.free_kb = available_kb(sections[5]);
  return f;
}

std::vector<CheckLine> box_check_lines(const BoxFacts& f, const SshSettings& s) {
  std::vector<CheckLine> lines;
  bool kernel = s.install != SshInstall::none;
  CheckLine root{"root", f.uid == 0, kernel, ""};
  std::string why = kernel ? ": installing a kernel needs root (user: root)" : " (enough for install: none)";
  root.detail = f.uid == 0 ? s.user + " is root"
                : !f.uid   ? "`id -u` printed nothing"
                           : s.user + " is uid " + std::to_string(*f.uid) + why;
  root.ok = root.ok || !kernel;
  lines.push_back(root);
  if (s.install == SshInstall::kexec) {
    lines.push_back(kexec_line(f));
  }
  std::int64_t needed = kernel ? k_kernel_free_kb : k_artifacts_free_kb;
  CheckLine disk{"disk", f.free_kb && *f.free_kb >= needed, true, ""};
  disk.detail = !f.free_kb ? "cannot make or measure " + s.kernel_dir + " (kernel_dir): is it writable?"
                           : gigabytes(*f.free_kb) + " free in " + s.kernel_dir +
                               (disk.ok ? "" : ", less than the " + gigabytes(needed) + " a visit may need");
  lines.push_back(disk);
  lines.push_back({"perf", !f.perf.empty(), false,
                   f.perf.empty() ? "no perf on the box: jobs with perf: get no perf-stat/perf-profile rows (Debian: "
                                    "apt install linux-perf)"
                                  : f.perf});
  return lines;
}

} // namespace bisectd::lab
