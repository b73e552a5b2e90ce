# Stage timing for scripts/test: each stage's seconds and the slowest ctest tests, printed as one table when the
# script exits, also when a stage fails (that stage is marked FAILED). Sourced; needs bash.
#   timing_init LOG_DIR      the ctest outputs are kept in LOG_DIR (their "Test #N: name ... sec" lines are read)
#   stage NAME               starts stage NAME (ending the one before)
#   stage_ctest NAME ARGS... runs ctest ARGS as stage NAME, its output also kept for the slowest-tests list
#   timing_mark LABEL        the table also prints LABEL with the seconds from the start to here

TIMING_NAMES=()
TIMING_SECONDS=()
TIMING_STATES=()
TIMING_CURRENT=""
TIMING_STARTED=0
TIMING_BEGIN=0
TIMING_LOGS=""
TIMING_MARK_LABEL=""
TIMING_MARK_SECONDS=""

timing_now() { date +%s.%N; }

timing_init() {
  TIMING_LOGS=$1
  mkdir -p "$TIMING_LOGS"
  rm -f "$TIMING_LOGS"/ctest-*.log
  TIMING_BEGIN=$(timing_now)
  trap 'timing_exit $?' EXIT
  # Killed (a CI timeout, ^C): the EXIT trap would see the status of the last command, so say the signal's status.
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

# timing_close STATE: records the running stage's seconds with STATE (ok or FAILED).
timing_close() {
  [ -n "$TIMING_CURRENT" ] || return 0
  TIMING_NAMES+=("$TIMING_CURRENT")
  TIMING_SECONDS+=("$(timing_seconds_since "$TIMING_STARTED")")
  TIMING_STATES+=("$1")
  TIMING_CURRENT=""
}

stage() {
  timing_close ok
  TIMING_CURRENT=$1
  TIMING_STARTED=$(timing_now)
  echo "== $1${2:+: $2}"
}

# stage_ctest NAME DESCRIPTION CTEST_ARGS...: one ctest call as its own stage; its per-test lines are kept.
stage_ctest() {
  local name=$1 description=$2
  shift 2
  stage "$name" "$description"
  ctest "$@" 2>&1 | tee "$TIMING_LOGS/ctest-$name.log"
}

timing_mark() {
  timing_close ok
  TIMING_MARK_LABEL=$1
  TIMING_MARK_SECONDS=$(timing_seconds_since "$TIMING_BEGIN")
}

timing_seconds_since() { awk -v a="$1" -v b="$(timing_now)" 'BEGIN { printf "%.0f", b - a }'; }

timing_minutes() { awk -v s="$1" 'BEGIN { printf "%.1f", s / 60 }'; }

timing_exit() {
  local status=$1
  timing_close "$([ "$status" -eq 0 ] && echo ok || echo FAILED)"
  timing_table "$status"
  exit "$status"
}

timing_table() {
  local status=$1 i total
  total=$(timing_seconds_since "$TIMING_BEGIN")
  echo
  echo "== timing (scripts/test$( [ -n "${TIMING_ARGS:-}" ] && echo " $TIMING_ARGS"), exit $status)"
  printf '%-20s %8s  %s\n' stage seconds state
  for i in "${!TIMING_NAMES[@]}"; do
    printf '%-20s %8s  %s\n' "${TIMING_NAMES[$i]}" "${TIMING_SECONDS[$i]}" "${TIMING_STATES[$i]}"
  done
  [ -z "$TIMING_MARK_LABEL" ] ||
    printf '%-20s %8s  (%s min)\n' "$TIMING_MARK_LABEL" "$TIMING_MARK_SECONDS" "$(timing_minutes "$TIMING_MARK_SECONDS")"
  printf '%-20s %8s  (%s min)\n' total "$total" "$(timing_minutes "$total")"
  # ctest's lines: "  3/17 Test  #5: integration.merge ..........   Passed   28.91 sec"
  local slowest
  slowest=$(cat "$TIMING_LOGS"/ctest-*.log 2>/dev/null |
    sed -nE 's/^.*Test +#[0-9]+: ([^ ]+) \.*[^0-9]*([0-9]+\.[0-9]+) sec$/\2 \1/p' | sort -rn | head -10)
  if [ -n "$slowest" ]; then
    echo "slowest tests:"
    echo "$slowest" | awk '{ printf "  %8.0f  %s\n", $1, $2 }'
  fi
}
