#pragma once
// One line of a machine check (`bisectctl machine check`): what was looked at, whether it passed, and when not, what
// is wrong and how to fix it.

#include <string>
#include <vector>

namespace bisectd::lab {

struct CheckLine {
  std::string name;    // "reach", "root", "kexec", "disk", "copy", "console", "power", ...
  bool ok = false;
  bool needed = true;  // the machine's settings need it: a failed needed line fails the check
  std::string detail;  // one line
};

struct CheckOptions {
  bool power = false; // run the power command for real (and wait for the box), not just find it
};

// True when every needed line passed.
inline bool check_passed(const std::vector<CheckLine>& lines) {
  for (const auto& line : lines) {
    if (line.needed && !line.ok) {
      return false;
    }
  }
  return true;
}

} // namespace bisectd::lab
