#include "lab/run_blocks.hpp"

#include "base/strings.hpp"
#include "monitors/perf_text.hpp"

namespace bisectd::lab {

namespace {

constexpr std::string_view k_marker_prefix = "BISECTD-";

// "BISECTD-PROC before vmstat" → that file of that snapshot; a malformed marker → nullptr.
std::string* proc_target(std::string_view marker, monitors::Snapshot* before, monitors::Snapshot* after) {
  auto parts = base::split(marker, ' ');
  if (parts.size() != 3 || parts[2].empty()) {
    return nullptr;
  }
  auto* snapshot = parts[1] == "before" ? before : parts[1] == "after" ? after : nullptr;
  return snapshot != nullptr ? &snapshot->files[parts[2]] : nullptr;
}

// "BISECTD-PERF profile" → that text; a malformed marker → nullptr.
std::string* perf_target(std::string_view marker, PerfText* perf) {
  auto parts = base::split(marker, ' ');
  if (perf == nullptr || parts.size() != 2) {
    return nullptr;
  }
  if (parts[1] == "stat") {
    return &perf->stat;
  }
  if (parts[1] == "profile") {
    return &perf->profile;
  }
  return parts[1] == "calltrace" ? &perf->calltrace : nullptr;
}

} // namespace

std::string_view proc_block_function() {
  // cat's error for a missing file goes nowhere: the block is then empty and that monitor's metrics absent.
  return "bisectd_proc() { bisectd_phase=$1; shift; for bisectd_file in \"$@\"; do "
         "echo \"BISECTD-PROC $bisectd_phase $bisectd_file\"; cat \"/proc/$bisectd_file\" 2>/dev/null; "
         "echo BISECTD-PROC-END; done; }";
}

std::string_view perf_block_functions() {
  // A perf that is missing or refused (no PERF_EVENTS, no PMU for the event, perf_event_paranoid for a user) is
  // found by the test on `true`: the runs then go on without it and its metrics are absent.
  return R"SH(bisectd_stat_events=task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches
bisectd_stat_events=$bisectd_stat_events,branch-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,iTLB-load-misses
bisectd_stat_events=$bisectd_stat_events,cache-references,cache-misses
bisectd_perf_works() {
  bisectd_what=$1
  shift
  perf "$@" -- true >"$bisectd_pdir/perf-try.log" 2>&1 && return 0
  echo "bisectd: perf $bisectd_what unavailable: $(head -c 300 "$bisectd_pdir/perf-try.log" | tr '\n' ' ')" >&2
  return 1
}
bisectd_perf_try() {
  bisectd_pdir=$1
  shift
  bisectd_pstat=
  bisectd_pprofile=
  [ $# -gt 0 ] || return 0
  if ! command -v perf >/dev/null 2>&1; then
    echo "bisectd: perf unavailable: no perf on this machine" >&2
    return 0
  fi
  for bisectd_want in "$@"; do
    case $bisectd_want in
    stat)
      bisectd_perf_works stat stat -x, -e task-clock -o "$bisectd_pdir/perf-try.stat" && bisectd_pstat=1 ;;
    profile)
      bisectd_pevent=cycles
      if perf record -q -a -g -e cycles -N -B -o "$bisectd_pdir/perf-try.data" -- true >/dev/null 2>&1; then
        bisectd_pprofile=1
      else
        bisectd_pevent=cpu-clock
        bisectd_perf_works profile record -q -a -g -e cpu-clock -N -B -o "$bisectd_pdir/perf-try.data" &&
          bisectd_pprofile=1
      fi ;;
    esac
  done
  rm -f "$bisectd_pdir"/perf-try.*
}
bisectd_perf_run() {
  bisectd_pdir=$1
  shift
  if [ -n "$bisectd_pstat" ]; then
    set -- perf stat -x, -e "$bisectd_stat_events" -o "$bisectd_pdir/perf.stat" -- "$@"
  fi
  if [ -n "$bisectd_pprofile" ]; then
    set -- perf record -q -a -g -e "$bisectd_pevent" -N -B -o "$bisectd_pdir/perf.data" -- "$@"
  fi
  "$@"
}
bisectd_perf_blocks() {
  if [ -n "$bisectd_pstat" ]; then
    echo "BISECTD-PERF stat"
    cat "$1/perf.stat" 2>/dev/null
    echo "BISECTD-PERF-END"
    rm -f "$1/perf.stat"
  fi
  if [ -n "$bisectd_pprofile" ]; then
    echo "BISECTD-PERF profile"
    perf report -i "$1/perf.data" --stdio --children --sort sym -g none --percent-limit 0.5 2>/dev/null |
      grep -v '^$'
    echo "BISECTD-PERF-END"
    echo "BISECTD-PERF calltrace"
    perf report -i "$1/perf.data" --stdio --no-children --sort sym -g folded,0,caller,percent --percent-limit 0.2 \
      2>/dev/null | grep -v -e '^#' -e '^$'
    echo "BISECTD-PERF-END"
    rm -f "$1/perf.data" "$1/perf.data.old"
  fi
}
)SH";
}

std::map<std::string, double> perf_metrics(const RunSpec::Perf& perf, const PerfText& text, double seconds) {
  std::map<std::string, double> out;
  if (perf.stat) {
    out.merge(monitors::perf_stat_metrics(text.stat, seconds));
  }
  if (perf.profile) {
    out.merge(monitors::perf_profile_metrics(text.profile));
    out.merge(monitors::perf_calltrace_metrics(text.calltrace));
  }
  return out;
}

bool RunBlockReader::take(std::string_view line, monitors::Snapshot* before, monitors::Snapshot* after,
                          PerfText* perf) {
  auto trimmed = base::trim(line);
  if (m_block != nullptr && !base::starts_with(trimmed, k_marker_prefix)) {
    *m_block += std::string(line) + "\n";
    return true;
  }
  m_block = nullptr;
  if (trimmed == k_proc_end_marker || trimmed == k_perf_end_marker) {
    return true;
  }
  if (base::starts_with(trimmed, std::string(k_perf_marker) + " ")) {
    // A perf block of no known kind (or with nowhere to go) is no block: its lines are left to the caller.
    m_block = perf_target(trimmed, perf);
    return true;
  }
  if (!base::starts_with(trimmed, std::string(k_proc_marker) + " ")) {
    return false;
  }
  // A malformed /proc marker, or one nobody asked for, is skipped with its lines.
  auto* target = proc_target(trimmed, before, after);
  m_discarded.clear();
  m_block = target != nullptr ? target : &m_discarded;
  return true;
}

} // namespace bisectd::lab
