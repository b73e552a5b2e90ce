#!/usr/bin/env python3
"""A build that forks a `setsid` grandchild and hangs past the job's build timeout: the attempt fails as timed out,
the grandchild (which left the build's process group) is gone, found by its pid, and the bisection goes on to its
end. Run with `sandbox: none`, so the daemon's own process-tree kill is what stops the grandchild (under bwrap its
pid namespace would)."""
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_lib import BAD, GOOD, NORMAL_BENCH, make_tree, query, write_job  # noqa: E402
from harness import alive, check, run, sleepers, wait_for  # noqa: E402

BUILD_TIMEOUT_S = 4


def test(env):
    tag = f"3600.{random.randrange(10**6):06d}"  # a sleep no other process on this host runs
    marker = os.path.join(env.dir, "hung-once")
    # The commit just before the regression (the bisection must measure it) hangs in its first build for a visit
    # (then builds: the retry after the back-off succeeds). Prebuilds (SCHED_IDLE) of it always hang, with a sleep
    # of their own, so that they never store a build the visit would reuse: timed out or cancelled, they store none.
    hang = f"""if chrt -p $$ | grep -q SCHED_IDLE; then
  setsid sleep {tag}1 </dev/null >/dev/null 2>&1 &
  exec sleep {tag}1
fi
if [ ! -e {marker} ]; then
  touch {marker}
  setsid sleep {tag} </dev/null >/dev/null 2>&1 &
  exec sleep {tag}
fi
"""
    benches = [NORMAL_BENCH.format(mean=GOOD)] * 6 + [NORMAL_BENCH.format(mean=BAD)] * 4
    builds = ["true\n"] * 10
    builds[5] = hang
    shas = make_tree(os.path.join(env.dir, "repo"), benches, builds)
    job = write_job(os.path.join(env.dir, "job.yaml"), build_timeout=f"{BUILD_TIMEOUT_S}s")
    config = os.path.join(env.dir, "bisectd.yaml")
    with open(config, "w") as f:
        f.write("sandbox: none\n")
    env.start_daemon("--config", config)
    try:
        env.ctl("tree", "add", "demo", os.path.join(env.dir, "repo"), "--branch", "master", "--job", job)
        bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas[0], "--bad", shas[-1]).stdout.strip()

        wait_for(lambda: len(sleepers(tag)) == 2, 120, "the hanging build and its grandchild never both ran")
        pids = sleepers(tag)
        started = time.time()
        print(f"hung-build: build and grandchild running as pids {pids}")
        wait_for(lambda: not any(alive(pid) for pid in pids), BUILD_TIMEOUT_S + 30,
                 f"the hung build or its setsid grandchild outlived the build timeout: {pids}")
        gone = time.time() - started
        print(f"hung-build: both gone {gone:.1f}s after they were seen (build timeout {BUILD_TIMEOUT_S}s)")
        check(gone < BUILD_TIMEOUT_S + 10, f"the processes lived {gone:.1f}s, past the timeout and the 2 s grace")

        r = env.ctl("wait", bid, "--timeout", "240", expect=None)
        show = env.ctl_json("show", bid)
        print(f"hung-build: bisection {show['state']} in {time.time() - started:.0f}s, culprit {show['culprit']}")
        check(show["state"] == "found" and show["culprit"] == shas[6],
              f"bisection {show['state']}, culprit {show['culprit']} (planted {shas[6]}): {r.stderr[-300:]}")
        log = open(env.log_path, errors="replace").read()
        timeouts = [line for line in log.splitlines() if shas[5][:10] in line and "timed out" in line]
        rows = query(env, "SELECT state, attempts, error FROM requests WHERE commit_sha = ?", shas[5])
        print(f"hung-build: requests of the hung commit: {rows}")
        print("hung-build: " + "\n  ".join(timeouts))
        check(any("request" in t and "build" in t for t in timeouts), "no visit's build of the hung commit was "
                                                                      "logged as timed out")
        check(any(state == "done" and attempts >= 2 for state, attempts, _ in rows),
              "the hung commit was not measured after its retry")
        check(all("\n" not in (e or "") for _, _, e in rows), "a multi-line error")
        check(not sleepers(tag) and not sleepers(tag + "1"), "processes of the hung builds are still running")
    finally:
        for pid in sleepers(tag) + sleepers(tag + "1"):
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(run("faults-hung-build", test))
