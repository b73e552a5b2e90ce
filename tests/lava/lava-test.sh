#!/usr/bin/env bash
# LAVA test (ctest label `lava`): a real LAVA 2023.01 (Debian 12) on this host, started by hand (scripts/lib/lava.sh),
# two QEMU devices without KVM, and visits of the kernel the kernel tests build through the `lava` backend:
#   lava-test.sh LAVA_VISIT_TOOL KERNEL_LAB_TOOL BENCH_CORE_DIR
# Checks: wrong URL / wrong token fail machine creation with one line; slots = idle devices; a visit gives samples
# (timed against the `qemu` backend on the same kernel); a bad artifact URL is Incomplete → infra; a visit killed
# with SIGKILL while its job runs is resumed from the stored job id and followed to the end, not resubmitted (jobs
# counted on the LAVA side). BISECTD_LAVA_PARTS (default "visits bisect") chooses the visits, the bisection through
# bisectd on LAVA devices (test_lava_bisect.py), or both.
# Needs root (packages, PostgreSQL); exit 125 (skip) when a prerequisite is missing. Timings: "timing: ..." lines.
set -euo pipefail

tool=$(realpath "$1")
kernel_tool=$(realpath "$2")
export BISECTD_BENCH_CORE_DIR=$(realpath "$3")
src=$(cd "$(dirname "$0")/../.." && pwd)
source "$src/scripts/lib/packages.sh"
source "$src/scripts/lib/lava.sh"
root=${BISECTD_KERNEL_TEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bisectd/kernel-test}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lava-test.XXXXXX")
# LAVA's scheduler runs as lavaserver and keeps its log under here.
chmod 711 "$tmp"
export LAVA_DIR=$tmp/lava
failures=0
parts=" ${BISECTD_LAVA_PARTS:-visits bisect} "

skip() { echo "SKIP: $*"; exit 125; }
note() { echo "--- $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
value() { sed -n "s/^$1: //p" "$2" | head -1; }
expect() { # expect FILE KEY VALUE
  local got
  got=$(value "$2" "$1")
  [[ $got == "$3" ]] || fail "$1: $2 is '$got', expected '$3'"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# PostgreSQL is left as found: stopped again when this test started it.
postgres_was_running=0
lava_postgres_running && postgres_was_running=1
cleanup() {
  lava_stop "$LAVA_DIR"
  ((postgres_was_running)) || lava_postgres_down || echo "lava: PostgreSQL did not stop" >&2
}
trap cleanup EXIT

[[ $(id -u) -eq 0 ]] || skip "needs root (LAVA's packages and PostgreSQL)"
[[ -r /usr/src/linux-source-6.1.tar.xz ]] || skip "linux-source-6.1 not installed"
[[ -x /bin/busybox ]] || skip "busybox-static not installed"
[[ -x $BISECTD_BENCH_CORE_DIR/page_fault ]] || skip "bench-core not built in $BISECTD_BENCH_CORE_DIR"

note "LAVA: install (first time ~5 min), start, set up"
start=$(now)
lava_install >"$tmp/install.log" 2>&1 || { tail -20 "$tmp/install.log"; exit 1; }
echo "timing: LAVA install $(elapsed "$start")s"
start=$(now)
lava_start "$LAVA_DIR" || { tail -20 "$LAVA_DIR"/*.log; exit 1; }
lava_setup "$LAVA_DIR" >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
lava_start_worker "$LAVA_DIR" || exit 1
echo "timing: LAVA start + setup $(elapsed "$start")s"
jobs_on_lava() { lava_api "jobs/?limit=1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["count"])'; }
job_state() { lava_api "jobs/$1/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])'; }

note "the kernel (the kernel tests' build, reused)"
"$src/tests/kernel/kernel-worktree.sh" "$root" >"$tmp/tree" 2>"$tmp/tree.log" || { cat "$tmp/tree.log"; exit 1; }
worktree=$(value worktree "$tmp/tree")
base=$(value base "$tmp/tree")
git -C "$worktree" -c advice.detachedHead=false checkout -q -f --detach "$base"
"$kernel_tool" build --tree "$(value tree "$tmp/tree")" --worktree "$worktree" --commit "$base" \
  --store "$(value store "$tmp/tree")" --build-root "$(value build_root "$tmp/tree")" \
  --fragment "$src/configs/kconfig/qemu-x86_64.config" >"$tmp/build" 2>>"$tmp/tool.log"
expect "$tmp/build" outcome ok
artifacts=$(value artifact_dir "$tmp/build")
release="6.1.192-g${base:0:12}"

if [[ $parts == *" visits "* ]]; then
lava_settings=(--setting "url=$LAVA_URL" --setting "token_file=$LAVA_DIR/token" --setting device_type=qemu
  --setting timeouts.queue=300s --setting timeouts.unreachable=60s)
visit_command() { # visit_command [tool args...]: sets `command` to the argv of one page_fault visit, 2 runs
  command=("$tool" --artifacts "$artifacts" --log-dir "$tmp/logs" --release "$release" --runs 2
    --primary page_fault.ops_per_sec --memory-mb 256 --monitors proc-vmstat,vmstat,interrupts,softirqs,meminfo "$@"
    -- page_fault --seconds 1)
}
visit() { # visit OUT [tool args...]: one page_fault visit, 2 runs
  local out=$1
  shift
  visit_command "$@"
  "${command[@]}" >"$out" 2>>"$tmp/tool.log" || true
}

note "machine creation: a wrong URL or token is one line, the right ones give slots = idle devices"
echo "not-a-token" >"$tmp/bad-token"
"$tool" --check-only --setting url=http://127.0.0.1:9 --setting "token_file=$LAVA_DIR/token" \
  --setting device_type=qemu >"$tmp/bad-url" 2>>"$tmp/tool.log" && fail "a wrong URL was accepted"
grep -q "^error: unreachable: machine visit-tool: LAVA at http://127.0.0.1:9" "$tmp/bad-url" || fail "bad URL: $(cat "$tmp/bad-url")"
"$tool" --check-only --setting "url=$LAVA_URL" --setting "token_file=$tmp/bad-token" \
  --setting device_type=qemu >"$tmp/bad-tok" 2>>"$tmp/tool.log" && fail "a wrong token was accepted"
grep -q "^error: invalid_config: .*token was rejected" "$tmp/bad-tok" || fail "bad token: $(cat "$tmp/bad-tok")"
[[ $(wc -l <"$tmp/bad-tok") -eq 1 ]] || fail "the token error is not one line"
"$tool" --check-only "${lava_settings[@]}" >"$tmp/check" 2>>"$tmp/tool.log" || fail "check: $(cat "$tmp/check")"
expect "$tmp/check" slots 2

note "one visit on qemu and one on LAVA, same kernel: samples, and LAVA's overhead"
visit "$tmp/qemu" --backend qemu --setting accel=tcg
expect "$tmp/qemu" outcome ok
jobs_before=$(jobs_on_lava)
visit "$tmp/lava-visit" "${lava_settings[@]}" --perf stat,profile
expect "$tmp/lava-visit" outcome ok
expect "$tmp/lava-visit" runs 2
expect "$tmp/lava-visit" run0.ok 1
expect "$tmp/lava-visit" run1.ok 1
awk -F': ' '$1 == "run0.page_fault.ops_per_sec" && $2 > 1000 { ok = 1 } END { exit !ok }' "$tmp/lava-visit" ||
  fail "no plausible page_fault.ops_per_sec sample from LAVA"
grep -q "BISECTD-BOOT release=$release" "$(value console_log "$tmp/lava-visit")" || fail "the LAVA console lacks the marker"
for visit_out in "$tmp/qemu" "$tmp/lava-visit"; do # the guest's /proc snapshots around each run
  grep -q "^run1\.meminfo\.MemFree: " "$visit_out" || fail "$visit_out: no meminfo.MemFree metric"
  grep -q "^run1\.vmstat\.cpu\.sy: " "$visit_out" || fail "$visit_out: no vmstat.cpu.sy metric"
done
# perf from the ramdisk (the host's perf and its libraries): counts and a profile of each run.
grep -q "^run1\.perf-stat\.ps\.page-faults: " "$tmp/lava-visit" || fail "no perf-stat.ps.page-faults metric from LAVA"
grep -q "^run1\.perf-profile\.children\.cycles-pp\.handle_mm_fault: " "$tmp/lava-visit" ||
  fail "no perf-profile metric from LAVA"
[[ $(jobs_on_lava) -eq $((jobs_before + 1)) ]] || fail "one visit is not one LAVA job"
echo "timing: visit qemu $(value seconds "$tmp/qemu")s, lava $(value seconds "$tmp/lava-visit")s"

note "a bad artifact URL: the job is Incomplete, the visit infra"
mkdir -p "$tmp/publish"
visit "$tmp/bad-url-visit" "${lava_settings[@]}" --setting "artifact_url=$LAVA_URL/no-such-artifacts" \
  --setting "publish_dir=$tmp/publish"
expect "$tmp/bad-url-visit" outcome infra
grep -q "Incomplete\|infrastructure" "$tmp/bad-url-visit" || fail "bad artifact: $(value message "$tmp/bad-url-visit")"

note "SIGKILL while the job runs, then resume from the stored id: followed to the end, not resubmitted"
jobs_before=$(jobs_on_lava)
rm -f "$tmp/handle"
# The tool itself in the background (not a function's subshell): $! is then the visitor that SIGKILL must stop.
visit_command "${lava_settings[@]}" --handle-file "$tmp/handle"
"${command[@]}" >"$tmp/killed" 2>>"$tmp/tool.log" &
visitor=$!
for _ in $(seq 240); do
  [[ -s $tmp/handle ]] && [[ $(job_state "$(cat "$tmp/handle")") == Running ]] && break
  sleep 0.5
done
[[ -s $tmp/handle ]] || fail "no handle was stored"
kill -KILL "$visitor" 2>/dev/null || true
wait "$visitor" 2>/dev/null || true
kill -0 "$visitor" 2>/dev/null && fail "the killed visitor still runs"
id=$(cat "$tmp/handle")
echo "killed the visit while LAVA job $id was $(job_state "$id")"
visit "$tmp/resumed" "${lava_settings[@]}" --resume "$id"
expect "$tmp/resumed" outcome ok
expect "$tmp/resumed" run1.ok 1
[[ $(jobs_on_lava) -eq $((jobs_before + 1)) ]] || fail "the resumed visit submitted another job"

fi

if [[ $parts == *" bisect "* ]]; then
  note "the planted regression bisected by bisectd on LAVA devices"
  start=$(now)
  LAVA_TOKEN_FILE=$LAVA_DIR/token LAVA_CALLBACK_SECRET_FILE=$LAVA_DIR/callback-secret python3 "$src/tests/lava/test_lava_bisect.py" || fail "bisection on LAVA"
  echo "timing: bisection on LAVA $(elapsed "$start")s"
fi

trap - EXIT
cleanup # before the logs go: LAVA's pids are listed there
if ((failures > 0)); then
  echo "lava test: $failures failure(s); logs in $tmp"
  exit 1
fi
rm -rf "$tmp"
echo "lava test: ok"
