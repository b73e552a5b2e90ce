#include "lab/proc_blocks.hpp"

#include "base/strings.hpp"

namespace bisectd::lab {

namespace {

constexpr std::string_view k_marker_prefix = "BISECTD-";

} // namespace

std::string_view proc_block_function() {
  // cat's error for a missing file goes nowhere: the block is then empty and that monitor's metrics absent.
  return "bisectd_proc() { bisectd_phase=$1; shift; for bisectd_file in \"$@\"; do "
         "echo \"BISECTD-PROC $bisectd_phase $bisectd_file\"; cat \"/proc/$bisectd_file\" 2>/dev/null; "
         "echo BISECTD-PROC-END; done; }";
}

bool ProcBlockReader::take(std::string_view line, monitors::Snapshot* before, monitors::Snapshot* after) {
  auto trimmed = base::trim(line);
  if (m_block != nullptr && !base::starts_with(trimmed, k_marker_prefix)) {
    *m_block += std::string(line) + "\n";
    return true;
  }
  m_block = nullptr;
  if (trimmed == k_proc_end_marker) {
    return true;
  }
  if (!base::starts_with(trimmed, std::string(k_proc_marker) + " ")) {
    return false;
  }
  // "BISECTD-PROC before vmstat": a malformed one is skipped with its lines.
  auto parts = base::split(trimmed, ' ');
  monitors::Snapshot* snapshot = nullptr;
  if (parts.size() == 3 && !parts[2].empty()) {
    snapshot = parts[1] == "before" ? before : parts[1] == "after" ? after : nullptr;
  }
  m_discarded.clear();
  m_block = snapshot != nullptr ? &snapshot->files[parts[2]] : &m_discarded;
  return true;
}

} // namespace bisectd::lab
