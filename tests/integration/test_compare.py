#!/usr/bin/env python3
"""`bisectctl compare` and `results --metric` through the real daemon, on a userspace job with
`monitors: [proc-vmstat, time]`: a bisection measures both ends of a tree whose planted commit does four times the
CPU work and sleeps three times as long per run, so the runs' time.user_time and time.elapsed_time change far
beyond their noise. `compare BASE HEAD` prints LKP's table: the primary metric first, then the significant rows
grouped as LKP's reports group them (the benchmark's own, time.*, proc-vmstat.*), with time.* rows; `--json` gives
the same rows; `results HEAD --metric 'time.*'` lists only time.* metrics; a bad glob, an unmeasured commit and a
job that did not measure both are one-line errors; `report ID` and `report ID --all` carry the time.* rows."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from harness import check, one_line_error, run, write_job  # noqa: E402
from make_demo_repo import commit, git, write  # noqa: E402

JOB = "compare-demo"

# Fixed work and a fixed sleep per run, both from work.h: the run's CPU and wall time depend on what was compiled.
# bench.ops_per_sec is modelled (1e7 / WORK_M with 0.5% noise), as in verify_repo.py: a timed rate is too noisy on
# a shared machine for the bisection to be quick.
BENCH_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "work.h"

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
    for name in ("time.user_time", "time.elapsed_time"):
        check(name in names, f"{name} is not a row of the table:\n{text}")
        change = row_change(text, name)
        check(change is not None and float(change) > 50, f"{name}: change {change}, expected far above +50%")
    ranks = [group_rank(n) for n in names[1:]]
    check(ranks == sorted(ranks), f"rows are not in LKP's group order: {names}")
    check("bench.work_m" in names, f"the benchmark's own changed metric is missing: {names}")
    return names


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo)
    env.start_daemon()
    job = write_job(os.path.join(env.dir, "job.yaml"), name=JOB, runs=3, extra="monitors: [proc-vmstat, time]\n")
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
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
    user = next(row for row in reply["rows"] if row["name"] == "time.user_time")
    check(user["b_mean"] > 2 * user["a_mean"] > 0, f"time.user_time: {user}")
    full = env.ctl("compare", shas["base"], shas["head"], "--all").stdout
    check(set(names) <= set(table_names(full)) and "more row" not in full, f"--all lost rows:\n{full}")

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

    # The report has the same kind of rows; --all prints it whole.
    report = env.ctl("report", bid).stdout
    check("time.user_time" in table_names(report), f"the report has no time.user_time row:\n{report}")
    report_all = env.ctl("report", bid, "--all").stdout
    check(set(table_names(report)) <= set(table_names(report_all)), "report --all lost rows")


if __name__ == "__main__":
    sys.exit(run("compare", test))
