#!/usr/bin/env python3
"""Disk full during a run (issue 29, item 6): the data dir (builds, run logs, database) is on a small tmpfs this test
mounts; the benchmark of the commit before the regression fills it (scratch files in its cwd, as a runaway benchmark
does), then prints its metric and exits 0, so the daemon cannot write the run's log. That is infra, not
`benchmark_failed`: the request is retried after its back-off, the commit is never flagged, and once the space is
freed the commit is measured and the planted culprit found. (test_disk_full.py covers a full disk during a build.)
Skipped when mounting is not permitted here. Run with `sandbox: none` (the benchmark must reach the tmpfs and the
test's marker)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_lib import BAD, GOOD, NORMAL_BENCH, make_tree, query, write_job  # noqa: E402
from harness import check, wait_for  # noqa: E402
from test_disk_full import answers, free_space_and_wait, run_on_small_disk  # noqa: E402

# Until the test has freed the space (its marker), every run of this commit fills the disk before it reports.
FILL_BENCH = """import os, random, sys
if not os.path.exists({marker!r}):
    try:
        with open("fill.bin", "wb") as f:
            while True:
                f.write(b"\\0" * (1 << 20))
    except OSError as e:
        sys.stderr.write("bench: scratch file: %s\\n" % e.strerror)
print("bench.ops_per_sec: %.1f" % ({mean} * (1 + random.gauss(0, 0.01))))
"""


def full_disk_run(env, mount):
    env.data = os.path.join(mount, "data")
    freed_marker = os.path.join(env.dir, "freed")
    benches = [NORMAL_BENCH.format(mean=GOOD)] * 6 + [NORMAL_BENCH.format(mean=BAD)] * 4
    benches[5] = FILL_BENCH.format(marker=freed_marker, mean=GOOD)  # before the regression: must be measured
    shas = make_tree(os.path.join(env.dir, "repo"), benches)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    config = os.path.join(env.dir, "bisectd.yaml")
    with open(config, "w") as f:
        f.write("sandbox: none\n")  # bwrap would hide the data dir (the tmpfs) and the marker from the benchmark
    env.start_daemon("--config", config)
    env.ctl("tree", "add", "demo", os.path.join(env.dir, "repo"), "--branch", "master", "--job", job)
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas[0], "--bad", shas[-1]).stdout.strip()

    # The daemon's log says how it took the run (the database is on the full disk too: the failure may be stored
    # only once space is freed, see store_failure).
    def judged():
        log = open(env.log_path, errors="replace").read()
        return [line for line in log.splitlines() if shas[5][:10] in line and ("disk full" in line or
                                                                              "benchmark_failed" in line)]
    wait_for(judged, 180, "the run on a full disk was never judged")
    lines = judged()
    print("disk-full-run: " + "\n  ".join(lines))
    for line in lines:
        check("benchmark_failed" not in line, f"a run on a full disk was judged a benchmark failure: {line}")
        check("infra: run" in line and "disk full" in line and "retry in" in line, f"not retried as infra: {line}")
    check(env.daemon.poll() is None and answers(env), "the daemon does not answer on a full disk")

    r, show = free_space_and_wait(env, bid, freed_marker, "disk-full-run")
    flags = query(env, "SELECT flag, message FROM commit_flags WHERE commit_sha = ?", shas[5])
    check(not flags, f"the commit whose run met the full disk is flagged: {flags}")
    codes = query(env, "SELECT DISTINCT error_code FROM requests WHERE commit_sha = ? AND error_code IS NOT NULL",
                  shas[5])
    check(all(code == "infra" for (code,) in codes), f"the requests of the commit failed with {codes}")
    samples = query(env, "SELECT COUNT(*) FROM samples WHERE commit_sha = ?", shas[5])[0][0]
    check(samples > 0, "the commit was never measured after the space was freed")
    check(r.returncode == 0 and show["state"] == "found" and show["culprit"] == shas[6],
          f"bisection {show['state']} {show['culprit']} (planted {shas[6]}): {r.stderr[-300:]}")
    check(query(env, "PRAGMA integrity_check") == [("ok",)], "the database fails its integrity check")


if __name__ == "__main__":
    sys.exit(run_on_small_disk("faults-disk-full-run", full_disk_run))
