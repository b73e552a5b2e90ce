#!/usr/bin/env bash
# What collecting the monitors and perf around a run costs the run's primary metric, measured in the QEMU lab:
# one kernel (the kernel tests' base commit, taken from their build store, built there when missing) is booted
# 2 x PAIRS times under TCG, every other boot with all guest monitors and perf stat + perf record, in ABBA order
# (a slow drift of the host's speed then weighs on both sides alike), RUNS runs of page_fault each. Prints one
# line per boot and the ratio of the means (with / without), with the spread of the per-pair ratios.
# Usage: bench/collection-overhead/run.sh BUILD_DIR [PAIRS] [RUNS] [COLLECT]
#   BUILD_DIR: a build with tests/kernel/kernel_lab_tool and bench-core (scripts/test's build/test).
#   COLLECT: what the "with" boots collect: all (default: the monitors, perf stat and perf profile), monitors,
#            stat or profile; the others collect nothing.
#   State: the kernel tests' ${BISECTD_KERNEL_TEST_DIR:-${XDG_CACHE_HOME:-~/.cache}/bisectd/kernel-test}.
set -euo pipefail

build=$(realpath "${1:?usage: run.sh BUILD_DIR [PAIRS] [RUNS] [COLLECT]}")
pairs=${2:-4}
runs=${3:-3}
case ${4:-all} in
  all) collect=(--monitors proc-vmstat,vmstat,interrupts,softirqs,meminfo --perf stat,profile) ;;
  monitors) collect=(--monitors proc-vmstat,vmstat,interrupts,softirqs,meminfo) ;;
  stat | profile) collect=(--perf "$4") ;;
  *) echo "run.sh: COLLECT is all, monitors, stat or profile, not '$4'" >&2; exit 2 ;;
esac
tool=$build/tests/kernel/kernel_lab_tool
export BISECTD_BENCH_CORE_DIR=$build/bench-core
src=$(cd "$(dirname "$0")/../.." && pwd)
root=${BISECTD_KERNEL_TEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bisectd/kernel-test}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collection-overhead.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[[ -x $tool && -x $BISECTD_BENCH_CORE_DIR/page_fault ]] || { echo "run.sh: no kernel_lab_tool or bench-core in $build" >&2; exit 2; }
value() { sed -n "s/^$1: //p" "$2" | head -1; }

mkdir -p "$root"
"$src/scripts/make-kernel-tree" "$root/tree.git" >/dev/null 2>"$tmp/tree.log" || { cat "$tmp/tree.log" >&2; exit 1; }
base=$(cat "$root/tree.git/.bisectd-base")
if [[ ! -e $root/worktree/.git ]]; then
  git -C "$root/tree.git" worktree prune
  git -C "$root/tree.git" worktree add -q --detach "$root/worktree" "$base"
fi
git -C "$root/worktree" checkout -q --detach "$base"
echo "building (or reusing) $base; a cold build takes 10-17 minutes" >&2
"$tool" build --tree demo --worktree "$root/worktree" --commit "$base" --store "$root/store" \
  --build-root "$root/kbuild" --fragment "$src/configs/kconfig/qemu-x86_64.config" >"$tmp/build" 2>"$tmp/tool.log"
[[ $(value outcome "$tmp/build") == ok ]] || { cat "$tmp/build" "$tmp/tool.log" >&2; exit 1; }
artifacts=$(value artifact_dir "$tmp/build")

# boot_mean ON|OFF PAIR: one boot's mean page_fault.ops_per_sec over its runs, "" when a run failed.
boot_mean() {
  local args=() out=$tmp/boot-$1-$2
  [[ $1 == on ]] && args=("${collect[@]}")
  "$tool" boot --artifacts "$artifacts" --log-dir "$tmp/boots" --accel tcg --primary page_fault.ops_per_sec \
    --release "6.1.192-g${base:0:12}" --runs "$runs" "${args[@]}" -- page_fault --seconds 2 >"$out" 2>>"$tmp/tool.log"
  [[ $(value outcome "$out") == ok ]] || return 0
  awk -F': ' -v n="$runs" '$1 ~ /^run[0-9]+\.page_fault\.ops_per_sec$/ { s += $2; k++ }
    END { if (k == n) printf "%.0f", s / k }' "$out"
}

declare -a with without
printf '| pair | order | with collection (ops/s) | without (ops/s) | ratio |\n|---|---|---|---|---|\n'
for ((i = 0; i < pairs; i++)); do
  if ((i % 2 == 0)); then
    a=$(boot_mean on "$i"); b=$(boot_mean off "$i"); order="with, without"
  else
    b=$(boot_mean off "$i"); a=$(boot_mean on "$i"); order="without, with"
  fi
  if [[ -z $a || -z $b ]]; then
    echo "| $((i + 1)) | $order | ${a:-failed} | ${b:-failed} | - |"
    continue
  fi
  with+=("$a"); without+=("$b")
  echo "| $((i + 1)) | $order | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }') |"
done
((${#with[@]} > 0)) || { echo "no pair finished; logs in $tmp/tool.log" >&2; exit 1; }
printf '%s\n' "${with[@]}" >"$tmp/with"
printf '%s\n' "${without[@]}" >"$tmp/without"
paste "$tmp/with" "$tmp/without" | awk '
  { a += $1; b += $2; r = $1 / $2; if (n == 0 || r < lo) lo = r; if (n == 0 || r > hi) hi = r; n++ }
  END { printf "\nmean with collection %.0f, without %.0f ops/s: ratio %.3f (%+.1f %%), per-pair ratios %.3f..%.3f, %d pairs of %s runs, collecting %s\n",
        a / n, b / n, a / b, 100 * (a / b - 1), lo, hi, n, "'"$runs"'", "'"${4:-all}"'" }'
