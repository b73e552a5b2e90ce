#!/usr/bin/env bash
# Slow kernel test (ctest label `kernel`): real builds of the demo kernel tree and QEMU boots.
#   kernel-test.sh KERNEL_LAB_TOOL VISIT_TOOL BENCH_CORE_DIR
# State kept between runs (so reruns are incremental): ${BISECTD_KERNEL_TEST_DIR:-~/.cache/bisectd/kernel-test}
#   tree.git; the worktree, build dirs and store are those of the kernel tests' daemon (kernel-worktree.sh).
# Exit 125 (skip) when a prerequisite is missing. Timings go to stdout as "timing: ..." lines.
set -euo pipefail

tool=$(realpath "$1")
visit_tool=$(realpath "$2")
export BISECTD_BENCH_CORE_DIR=$(realpath "$3")
src=$(cd "$(dirname "$0")/../.." && pwd)
root=${BISECTD_KERNEL_TEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bisectd/kernel-test}
fragment=$src/configs/kconfig/qemu-x86_64.config
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel-test.XXXXXX")
failures=0

skip() { echo "SKIP: $*"; exit 125; }
note() { echo "--- $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# value KEY FILE: the value of a "key: value" line of the tool's output.
value() { sed -n "s/^$1: //p" "$2" | head -1; }
expect() { # expect FILE KEY VALUE
  local got
  got=$(value "$2" "$1")
  [[ $got == "$3" ]] || fail "$1: $2 is '$got', expected '$3'"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[[ -r /usr/src/linux-source-6.1.tar.xz ]] || skip "linux-source-6.1 not installed"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (qemu-system-x86)"
[[ -x /bin/busybox ]] || skip "busybox-static not installed"
[[ -x $BISECTD_BENCH_CORE_DIR/page_fault ]] || skip "bench-core not built in $BISECTD_BENCH_CORE_DIR"

note "kernel tree"
"$src/tests/kernel/kernel-worktree.sh" "$root" >"$tmp/tree" 2>"$tmp/tree.log" || { cat "$tmp/tree.log"; exit 1; }
tree=$(value tree "$tmp/tree")
worktree=$(value worktree "$tmp/tree")
build_root=$(value build_root "$tmp/tree")
store=$(value store "$tmp/tree")
base=$(value base "$tmp/tree")
planted=$(value planted "$tmp/tree")
checkout() { git -C "$worktree" -c advice.detachedHead=false checkout -q -f --detach "$1"; }
build() { # build COMMIT OUT [STORE] [extra tool args...]
  local commit=$1 out=$2
  "$tool" build --tree "$tree" --worktree "$worktree" --commit "$commit" --store "${3:-$store}" \
    --build-root "$build_root" --fragment "$fragment" "${@:4}" >"$out" 2>>"$tmp/tool.log"
}
boot() { # boot COMMIT OUT [visit_tool args...] -- command: one visit to a QEMU machine
  local commit=$1 out=$2
  "$visit_tool" --backend qemu --setting accel=tcg --artifacts "$(value artifact_dir "$tmp/build-$commit")" \
    --log-dir "$tmp/boots" --primary "${PRIMARY:-page_fault.ops_per_sec}" "${@:3}" >"$out" 2>>"$tmp/tool.log"
}

note "build the base commit (cold: 10-17 min; later runs reuse the store)"
checkout "$base"
start=$(now)
build "$base" "$tmp/build-$base"
echo "timing: base build $(elapsed "$start")s (reused: $(value reused "$tmp/build-$base"))"
expect "$tmp/build-$base" outcome ok
expect "$tmp/build-$base" kernel_release "6.1.192-g${base:0:12}"
for artifact in bzImage config System.map; do
  [[ -s $(value artifact_dir "$tmp/build-$base")/$artifact ]] || fail "artifact $artifact missing"
done
build "$base" "$tmp/rebuild"
expect "$tmp/rebuild" reused yes

note "boot it and take samples"
boot "$base" "$tmp/boot-ok" --release "6.1.192-g${base:0:12}" --runs 2 -- page_fault --seconds 1
expect "$tmp/boot-ok" outcome ok
expect "$tmp/boot-ok" runs 2
expect "$tmp/boot-ok" run0.ok 1
expect "$tmp/boot-ok" run1.ok 1
awk -F': ' '$1 == "run0.page_fault.ops_per_sec" && $2 > 1000 { ok = 1 } END { exit !ok }' "$tmp/boot-ok" ||
  fail "no plausible page_fault.ops_per_sec sample"
grep -q "BISECTD-BOOT release=6.1.192-g${base:0:12}" "$(value console_log "$tmp/boot-ok")" || fail "console lacks the marker"

note "a kernel that is not the build's is a boot failure"
boot "$base" "$tmp/boot-wrong" --release "6.1.192-g000000000000" -- page_fault --seconds 1
expect "$tmp/boot-wrong" outcome boot_failed
expect "$tmp/boot-wrong" runs 0

note "a kernel that panics during boot is a boot failure with its console log kept"
boot "$base" "$tmp/boot-panic" --release "6.1.192-g${base:0:12}" --setting "append=rdinit=/nonexistent init=/nonexistent" \
  --setting boot_timeout=60s -- page_fault --seconds 1
expect "$tmp/boot-panic" outcome boot_failed
expect "$tmp/boot-panic" runs 0
grep -q "Kernel panic - not syncing" "$(value console_log "$tmp/boot-panic")" || fail "panic console log not kept"
grep -q "kernel crashed: Kernel panic" "$tmp/boot-panic" || fail "boot failure message does not name the panic"

note "two machines boot in parallel"
PRIMARY=syscall.ops_per_sec boot "$base" "$tmp/par1" --name qemu-a -- syscall --seconds 1 &
PRIMARY=syscall.ops_per_sec boot "$base" "$tmp/par2" --name qemu-b -- syscall --seconds 1 &
wait
expect "$tmp/par1" run0.ok 1
expect "$tmp/par2" run0.ok 1

note "a fragment option that does not survive olddefconfig rejects the job"
if build "$base" "$tmp/lost" "$tmp/store-lost" --extra CONFIG_E1000=y; then
  fail "a lost option was accepted"
fi
expect "$tmp/lost" error_code invalid_config
grep -q "CONFIG_E1000=y (now not set)" "$tmp/tool.log" || fail "the lost option is not named"
rm -rf "$(value build_dir "$tmp/lost")" "$(value build_dir "$tmp/lost").lock"

note "a documentation-only commit builds a kernel identical to its parent's but for the version stamp"
docs=$(git -C "$root/tree.git" rev-list --reverse "$base..$planted" | sed -n 1p) # docs: sysctl/vm
[[ -n $(git -C "$root/tree.git" diff --name-only "$base" "$docs" | grep -v '^Documentation/') ]] &&
  fail "the first commit after the base is not documentation-only"
base_fingerprint=$(value fingerprint "$tmp/build-$base")
if [[ -z $base_fingerprint ]]; then # reused from a store written before builds had fingerprints
  build "$base" "$tmp/build-base-again" "$tmp/store-fingerprint"
  base_fingerprint=$(value fingerprint "$tmp/build-base-again")
fi
# Built, not reused (a store of its own), in the build dir as the last build left it.
checkout "$docs"
build "$docs" "$tmp/build-docs" "$tmp/store-fingerprint"
expect "$tmp/build-docs" outcome ok
expect "$tmp/build-docs" reused no
[[ -n $(value fingerprint "$tmp/build-docs") ]] || fail "the docs build has no fingerprint"
expect "$tmp/build-docs" fingerprint "$base_fingerprint"
echo "fingerprint: base and docs-only commit both $(value fingerprint "$tmp/build-docs")"

note "incremental rebuild after a one-file change (and with BISECTD_KERNEL_PLAIN_MAKE=1, as scripts/test --full sets:
the time of a plain make of the same change in the same build dir)"
one_file=$(git -C "$root/tree.git" rev-list --reverse "$base..$planted" | sed -n 4p) # exit: comment in kernel/exit.c
objdir=$(value build_dir "$tmp/build-docs")
plain_make() { # plain_make COMMIT: what a developer would type in the same build dir
  CCACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/bisectd/ccache CCACHE_BASEDIR=$(dirname "$build_root") \
    make -C "$worktree" O="$objdir" ARCH=x86_64 "CC=ccache gcc" HOSTCC=gcc LOCALVERSION="-g${1:0:12}" \
    KBUILD_BUILD_USER=bisectd KBUILD_BUILD_HOST=bisectd -j"$(nproc)" bzImage >"$tmp/plain.log" 2>&1
}
# From the docs commit's build (the base's sources): one file changed.
checkout "$one_file"
start=$(now)
build "$one_file" "$tmp/build-one" "$tmp/store-incremental"
ours=$(elapsed "$start")
expect "$tmp/build-one" outcome ok
expect "$tmp/build-one" reused no
if [[ ${BISECTD_KERNEL_PLAIN_MAKE:-0} == 1 ]]; then # a measurement, no check: ~1 minute of CI left out
  checkout "$docs"
  plain_make "$docs"
  checkout "$one_file"
  start=$(now)
  plain_make "$one_file" || fail "plain make failed"
  echo "timing: one-file incremental rebuild: KernelBuilder ${ours}s, plain make $(elapsed "$start")s"
else
  echo "timing: one-file incremental rebuild: KernelBuilder ${ours}s"
fi

note "the planted commit slows page_fault down"
parent=$(git -C "$root/tree.git" rev-parse "$planted~1")
for commit in "$parent" "$planted"; do
  checkout "$commit"
  build "$commit" "$tmp/build-$commit"
  expect "$tmp/build-$commit" outcome ok
done
# Both kernels boot at the same time, so host load (TCG is CPU-bound) hits both alike.
if [[ -n $(value fingerprint "$tmp/build-$parent") && -n $(value fingerprint "$tmp/build-$planted") ]]; then
  [[ $(value fingerprint "$tmp/build-$parent") != "$(value fingerprint "$tmp/build-$planted")" ]] ||
    fail "the planted commit's kernel has its parent's fingerprint"
else # reused from a store written before builds had fingerprints (a warm cache of an older bisectd)
  echo "fingerprint: planted vs parent not compared (stored builds without fingerprints)"
fi
for commit in "$parent" "$planted"; do
  boot "$commit" "$tmp/bench-$commit" --name "qemu-${commit:0:6}" --release "6.1.192-g${commit:0:12}" --runs 3 \
    -- page_fault --seconds 2 &
done
wait
for commit in "$parent" "$planted"; do
  expect "$tmp/bench-$commit" outcome ok
done
mean() { awk -F': ' '$1 ~ /page_fault.ops_per_sec$/ { s += $2; n++ } END { printf "%.0f", n ? s / n : 0 }' "$1"; }
before=$(mean "$tmp/bench-$parent")
after=$(mean "$tmp/bench-$planted")
echo "timing: page_fault.ops_per_sec parent $before, planted $after"
awk -v a="$before" -v b="$after" 'BEGIN { exit !(b < 0.85 * a) }' || fail "planted commit is not >= 15% slower"
note "monitors and perf in the guest: the planted function in the planted kernel's profile only"
# The same two kernels, one run each with every guest monitor and perf stat + perf record (cpu-clock: TCG has
# no PMU), booted side by side as above. Boot times with and without perf show the cost of the bigger initramfs.
for commit in "$parent" "$planted"; do
  (start=$(now)
   boot "$commit" "$tmp/perf-$commit" --name "perf-${commit:0:6}" --release "6.1.192-g${commit:0:12}" \
     --monitors proc-vmstat,vmstat,interrupts,softirqs,meminfo --perf stat,profile -- page_fault --seconds 2
   echo "timing: boot+run with monitors and perf (${commit:0:6}): $(elapsed "$start")s") &
done
wait
for commit in "$parent" "$planted"; do
  expect "$tmp/perf-$commit" outcome ok
  expect "$tmp/perf-$commit" run0.ok 1
  { grep -E '^run0\.(proc-vmstat|perf-stat|perf-profile)' "$tmp/perf-$commit" | sort -t: -k2 -g -r | head -40 |
    sed "s/^/${commit:0:6} /"; } || true # shown for the log; the checks follow
  awk -F': ' '$1 == "run0.proc-vmstat.pgfault" && $2 > 1000 { ok = 1 } END { exit !ok }' "$tmp/perf-$commit" ||
    fail "${commit:0:6}: no plausible proc-vmstat.pgfault (CONFIG_VM_EVENT_COUNTERS?)"
  awk -F': ' '$1 == "run0.perf-stat.ps.page-faults" && $2 > 1000 { ok = 1 } END { exit !ok }' "$tmp/perf-$commit" ||
    fail "${commit:0:6}: no plausible perf-stat.ps.page-faults"
  grep -q '^run0\.perf-stat\.ps\.cycles:' "$tmp/perf-$commit" && fail "${commit:0:6}: cycles counted without a PMU"
  grep -q '^run0\.perf-profile\.children\.cycles-pp\.handle_mm_fault: ' "$tmp/perf-$commit" ||
    fail "${commit:0:6}: handle_mm_fault not in the profile"
done
locality=run0.perf-profile.self.cycles-pp.mm_account_fault_locality
awk -F': ' -v m="$locality" '$1 == m && $2 >= 2 { ok = 1 } END { exit !ok }' "$tmp/perf-$planted" ||
  fail "the planted kernel's profile lacks mm_account_fault_locality (>= 2% self)"
grep -q "^$locality:" "$tmp/perf-$parent" && fail "the parent's profile has mm_account_fault_locality"
# Its call chains: the planted function under the page fault handler, innermost first (LKP's calltrace names).
grep -qE '^run0\.perf-profile\.calltrace\.cycles-pp\.mm_account_fault_locality\..*handle_mm_fault' \
  "$tmp/perf-$planted" || fail "the planted kernel's call chains lack mm_account_fault_locality under handle_mm_fault"
gz=$(ls -S "$root"/../initramfs/perf-*.cpio.gz 2>/dev/null | head -1 || true)
[[ -n $gz ]] && echo "timing: perf archive $(stat -c %s "$gz") bytes gzip'd, $(gzip -dc "$gz" | wc -c) unpacked"
checkout "$base"

if ((failures > 0)); then
  echo "kernel test: $failures failure(s); logs in $tmp"
  exit 1
fi
rm -rf "$tmp"
echo "kernel test: ok"
