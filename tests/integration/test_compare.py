#!/usr/bin/env python3
"""`bisectctl compare` and `results --metric` through the real daemon, on a userspace job with
`monitors: [proc-vmstat, time]`: a bisection measures both ends of a tree whose planted commit does four times the
CPU work and sleeps three times as long per run, so the runs' time.elapsed_time changes far beyond its noise. Both
ends are also watched branch heads (`master` and `good`), so each has the job's 3 runs whatever the bisection chose.
`compare BASE HEAD` prints LKP's table: the primary metric first, then the significant rows grouped as LKP's
reports group them (the benchmark's own, time.*, proc-vmstat.*), with time.* rows whose numbers are the means of
the samples `results` lists; more rows than the cap of 30, so the table points to its `--all`, which has them all;
`--json` gives the same rows; `results HEAD --metric 'time.*'` lists only time.* metrics; a bad glob, an unmeasured
commit and a job that did not measure both are one-line errors; `report ID` is capped at 30 rows and says how to see
the rest, `report ID --all` has every row."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from harness import check, one_line_error, run, wait_for, write_job  # noqa: E402
from make_demo_repo import commit, git, write  # noqa: E402

JOB = "compare-demo"

# Fixed work and a fixed sleep per run, both from work.h: the run's CPU and wall time depend on what was compiled.
# bench.ops_per_sec is modelled (1e7 / WORK_M with 0.5% noise), as in verify_repo.py: a timed rate is too noisy on
# a shared machine for the bisection to be quick. The PARTS bench.part_NN counters follow WORK_M, so the table has
# more significant rows than the mail's cap (30): the capped mail and compare point to their --all, which has them.
BENCH_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "work.h"

#define PARTS 40

int main(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  srand((unsigned)now.tv_sec ^ (unsigned)now.tv_nsec ^ (unsigned)getpid() << 8);
  volatile unsigned long x = 1;
  for (long i = 0; i < WORK_M * 1000000L; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
  struct timespec pause = {0, SLEEP_MS * 1000000L};
  nanosleep(&pause, NULL);
  double noise = ((double)rand() / RAND_MAX - 0.5) * 0.01;
  printf("bench.ops_per_sec: %.1f\n", 1e7 / WORK_M * (1 + noise));
  printf("bench.work_m: %d\n", WORK_M);
  for (int i = 1; i <= PARTS; i++) printf("bench.part_%02d: %d\n", i, WORK_M * i);
  return 0;
}
'''

MAKEFILE = '''CFLAGS ?= -O2
.PHONY: bench
bench:
\t$(CC) $(CFLAGS) -o bench bench.c
'''


def make_repo(dest):
    """base, a note, the planted commit (4x work, 3x sleep), a note (head); and a side commit never measured."""
    os.makedirs(dest, exist_ok=True)
    git(dest, "init", "-q", "-b", "master")
    write(dest, "bench.c", BENCH_C)
    write(dest, "Makefile", MAKEFILE)
    write(dest, "work.h", "#define WORK_M 20\n#define SLEEP_MS 100\n")
    write(dest, "NOTES", "compare test project\n")
    shas = {"base": commit(dest, 0, "bench: initial benchmark")}
    write(dest, "NOTES", "compare test project\nnote 1\n")
    commit(dest, 1, "notes: add note 1")
    write(dest, "work.h", "#define WORK_M 80\n#define SLEEP_MS 300\n")
    shas["culprit"] = commit(dest, 2, "work: four times the rounds, a longer pause")
    write(dest, "NOTES", "compare test project\nnote 1\nnote 3\n")
    shas["head"] = commit(dest, 3, "notes: add note 3")
    git(dest, "checkout", "-q", "-b", "side", shas["base"])
    write(dest, "NOTES", "side\n")
    shas["side"] = commit(dest, 4, "notes: a side note")
    git(dest, "checkout", "-q", "master")
    git(dest, "branch", "good", shas["base"])
    return shas


def table_names(text):
    """The metric names of the table's rows (after the "%stddev" header and its "\\ | \\" line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "%stddev" in line) + 2
    names = []
    for line in lines[start:]:
        if not line.strip() or line.startswith(("    ...", "unavailable monitors:")):
            break
        names.append(line.split()[-1])
    return names


def row_change(text, name):
    for line in text.splitlines():
        if line.endswith("  " + name):
            return re.search(r"\s([+-][0-9.e+]+)%?\s", line).group(1)
    return None


def row_values(text, name):
    """The parent's mean, the change and the culprit's mean as the table prints them in `name`'s row."""
    for line in text.splitlines():
        if line.endswith("  " + name):
            fields = re.sub(r"±\s*\S+%", " ", line).split()
            check(len(fields) == 4, f"row of {name} is not 'A [± s%] CHANGE B [± s%] NAME': {line!r}")
            return float(fields[0]), fields[1], float(fields[2])
    return None


def results_mean(env, sha, name):
    """The mean of `name` over the commit's normal-build samples of the job, and their count, from `results`."""
    values = [s["metrics"][name] for s in env.ctl_json("results", sha)["samples"]
              if s["job"] == JOB and not s.get("variant") and name in s["metrics"]]
    check(values, f"results {sha[:12]}: no {name}")
    return sum(values) / len(values), len(values)


def shown_precision(value):
    """How far the table's printed mean may be from `value`: 2 decimals below 1000, whole numbers (truncated) up
    to 1e8, 4 significant digits above."""
    magnitude = abs(value)
    return 0.0051 if magnitude < 1000 else 1.0 if magnitude <= 1e8 else 1e-3 * magnitude


def check_consistent(env, text, reply, shas, name):
    """`name`'s row in compare's text and --json against the means of the samples `results` lists."""
    a_mean, a_runs = results_mean(env, shas["base"], name)
    b_mean, b_runs = results_mean(env, shas["head"], name)
    row = next(r for r in reply["rows"] if r["name"] == name)
    check(row["a_runs"] == a_runs and row["b_runs"] == b_runs,
          f"{name}: compare counts {row['a_runs']}/{row['b_runs']} runs, results {a_runs}/{b_runs}")
    for got, want in ((row["a_mean"], a_mean), (row["b_mean"], b_mean)):
        check(abs(got - want) <= 1e-9 * max(1.0, abs(want)), f"{name}: compare --json mean {got}, results {want}")
    shown_a, change, shown_b = row_values(text, name)
    for got, want in ((shown_a, a_mean), (shown_b, b_mean)):
        check(abs(got - want) <= shown_precision(want), f"{name}: the table shows {got}, results' mean is {want}")
    pct = 100.0 * (b_mean - a_mean) / a_mean
    check(abs(float(change.rstrip("%")) - pct) <= 0.1 + 1e-3 * abs(pct), f"{name}: change {change}, expected {pct:.1f}%")
    print(f"{name}: results {a_mean:.4g} ({a_runs} runs) -> {b_mean:.4g} ({b_runs} runs); compare shows "
          f"{shown_a:g} {change} {shown_b:g}")


def group_rank(name):
    for rank, prefix in enumerate(("bench.", "time.", "vmstat.", "proc-vmstat.")):
        if name.startswith(prefix):
            return rank
    return 9


def check_table(text, shas):
    check(f"job: {JOB}\n" in text, f"no job line:\n{text}")
    check(f"  {shas['base'][:10]} (\"bench: initial benchmark\")\n  {shas['head'][:10]} (\"notes: add note 3\")"
          in text, f"the commit block is not base then head:\n{text}")
    names = table_names(text)
    check(names and names[0] == "bench.ops_per_sec", f"the primary metric is not the first row: {names}")
    # The planted commit sleeps 3x as long: its wall time is beyond any noise. (Its CPU time is not shown: under
    # bwrap --unshare-all, wait4's rusage is bwrap's own, ~3 ms, not the benchmark's; a known gap of time.*.)
    check("time.elapsed_time" in names, f"time.elapsed_time is not a row of the table:\n{text}")
    change = row_change(text, "time.elapsed_time")
    check(change is not None and float(change) > 50, f"time.elapsed_time: change {change}, expected above +50%")
    ranks = [group_rank(n) for n in names[1:]]
    check(ranks == sorted(ranks), f"rows are not in LKP's group order: {names}")
    return names


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo)
    env.start_daemon()
    job = write_job(os.path.join(env.dir, "job.yaml"), name=JOB, runs=3, extra="monitors: [proc-vmstat, time]\n")
    # The watcher measures each branch's head with the job's runs: at least 3 of each compared commit, which the
    # bisection alone does not promise (its verification may stop early; identical builds share samples).
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--branch", "good", "--job", job)
    wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 2, 300, "the two heads were never measured")
    bid = str(json.loads(env.ctl("bisect", "start", "--tree", "demo", "--good", shas["base"], "--bad", shas["head"],
                                 "--json").stdout)["id"])
    r = env.ctl("wait", bid, "--timeout", "600", expect=None, timeout=700)
    show = env.ctl_json("show", bid)
    check(r.returncode == 0 and show["culprit"] == shas["culprit"],
          f"wait: exit {r.returncode}, culprit {show.get('culprit')}: {r.stderr[-300:]}")

    text = env.ctl("compare", shas["base"][:12], shas["head"]).stdout
    names = check_table(text, shas)
    print(f"compare: {len(names)} rows: {', '.join(names)}")
    print("\n".join("    " + line for line in text.splitlines()))

    reply = env.ctl_json("compare", shas["base"], shas["head"], "--job", JOB)
    check(reply["job"] == JOB and reply["a"]["commit"] == shas["base"] and reply["b"]["commit"] == shas["head"],
          f"compare --json: {json.dumps(reply)[:500]}")
    check([row["name"] for row in reply["rows"]] == names, f"--json rows differ from the text's: {reply['rows']}")
    check(reply["a"]["runs"] >= 3 and reply["b"]["runs"] >= 3, f"runs: {reply['a']}, {reply['b']}")
    elapsed = next(row for row in reply["rows"] if row["name"] == "time.elapsed_time")
    check(elapsed["b_mean"] > 1.5 * elapsed["a_mean"] > 0, f"time.elapsed_time: {elapsed}")
    for name in ("time.elapsed_time", "bench.part_01"):
        check_consistent(env, text, reply, shas, name)
    # 40 bench.part_NN rows and the monitors' rows: more than the cap, so the rest is one --all away.
    check(len(names) == 1 + 30 and reply["hidden"] > 0, f"{len(names)} rows, {reply['hidden']} hidden: not capped")
    pointer = f"    ... {reply['hidden']} more rows: bisectctl compare {shas['base'][:12]} {shas['head'][:12]} --job {JOB} --all"
    check(pointer in text.splitlines(), f"the capped table does not say how to see the rest:\n{text}")
    full = env.ctl("compare", shas["base"], shas["head"], "--all").stdout
    full_names = table_names(full)
    check(set(names) <= set(full_names) and "more row" not in full, f"--all lost rows:\n{full}")
    check(len(full_names) == len(names) + reply["hidden"], f"--all: {len(full_names)} rows, capped {len(names)} "
          f"+ {reply['hidden']} hidden")
    check("bench.work_m" in full_names and all(f"bench.part_{i:02d}" in full_names for i in range(1, 41)),
          f"--all lacks the benchmark's own changed metrics:\n{full}")

    # results --metric: only the matching metrics, in the table and in --json.
    samples = env.ctl_json("results", shas["head"], "--metric", "time.*")["samples"]
    check(samples, "results --metric 'time.*' gave no samples")
    for s in samples:
        check(s["metrics"] and all(n.startswith("time.") for n in s["metrics"]), f"not only time.*: {s['metrics']}")
    shown = env.ctl("results", shas["head"], "--metric", "time.*").stdout
    check("time.user_time" in shown and "bench.ops_per_sec" not in shown and "proc-vmstat." not in shown,
          f"results --metric 'time.*':\n{shown}")
    every = env.ctl_json("results", shas["head"])["samples"]
    check(any(n.startswith("proc-vmstat.") for s in every for n in s["metrics"]), "no proc-vmstat.* without --metric")

    # Bad input: one line each, naming what is wrong.
    one_line_error(env.ctl("results", shas["head"], "--metric", "time.[x", expect=2), "--metric", "time.[x", "'['")
    one_line_error(env.ctl("compare", shas["base"], shas["side"], expect=1), shas["side"], "not measured")
    one_line_error(env.ctl("compare", shas["base"], "master", expect=2), "B 'master'", "--tree")
    one_line_error(env.ctl("compare", shas["base"], shas["head"], "--job", "nosuch", expect=1), "nosuch",
                   "did not measure both")
    one_line_error(env.ctl("compare", "0000000", shas["head"], expect=1), "0000000", "not measured")
    by_ref = env.ctl("compare", shas["base"], "master", "--tree", "demo").stdout
    check(table_names(by_ref) == names, f"a ref with --tree gives another table:\n{by_ref}")
    # The pointer to the whole table names the commits by sha: the ref may have moved on when it is read.
    check(f"bisectctl compare {shas['base'][:12]} {shas['head'][:12]} --job {JOB} --tree demo --all" in by_ref,
          f"the capped table by ref does not point to --all by sha:\n{by_ref}")

    # The report has the same kind of rows; --all prints it whole.
    report = env.ctl("report", bid).stdout
    capped = table_names(report)
    check("time.elapsed_time" in capped, f"the report has no time.elapsed_time row:\n{report}")
    more = re.search(r"^    \.\.\. (\d+) more rows: bisectctl report " + bid + r" --all$", report, re.M)
    check(more and len(capped) == 1 + 30, f"the report's table is not capped at 30 with a pointer to --all:\n{report}")
    report_all = env.ctl("report", bid, "--all").stdout
    every_row = table_names(report_all)
    check(set(capped) <= set(every_row) and len(every_row) == len(capped) + int(more.group(1))
          and "more rows" not in report_all, f"report --all: {len(every_row)} rows, not {len(capped)} + "
          f"{more.group(1)}:\n{report_all}")
    print(f"report: {len(capped)} rows in the mail, {len(every_row)} with --all")


if __name__ == "__main__":
    sys.exit(run("compare", test))
