#pragma once
// The /proc snapshots of a run printed as text between markers, the one format of every backend that reads them on
// the machine under test and prints them back (the QEMU and LAVA initramfs /init on the console, the ssh boxes on
// the run's stdout):
//   BISECTD-PROC <before|after> <file>
//   ... the text of /proc/<file> (nothing when this kernel lacks the file) ...
//   BISECTD-PROC-END

#include "monitors/monitors.hpp"

#include <string>
#include <string_view>

namespace bisectd::lab {

inline constexpr std::string_view k_proc_marker = "BISECTD-PROC";
inline constexpr std::string_view k_proc_end_marker = "BISECTD-PROC-END";

// A POSIX sh function (busybox ash, dash) that prints the blocks: `bisectd_proc before|after FILE...`. Its
// arguments are data: callers pass them as words, never pasted into its text.
std::string_view proc_block_function();

// Reads the blocks out of a stream of lines (printk timestamps already stripped).
class ProcBlockReader {
public:
  // True when `line` belongs to the blocks (a block's marker or a line inside one): it went into `before` or `after`
  // (both may be null: the blocks are then only skipped). False for any other line; a line starting with
  // "BISECTD-" also ends an open block, so a lost end marker costs at most that block.
  bool take(std::string_view line, monitors::Snapshot* before, monitors::Snapshot* after);

private:
  std::string* m_block = nullptr; // inside a block: where its lines go
  std::string m_discarded;        // a block that belongs to no snapshot
};

} // namespace bisectd::lab
