#!/usr/bin/env python3
"""What a killed bisectd left running does not outlive its successor: a build that detaches a grandchild
(`setsid`) is running when bisectd is SIGKILLed; both processes survive the kill (they are nobody's children now);
the next bisectd on the same data dir stops them before it starts anything, and says so in its log."""
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, make_repo, run, wait_for  # noqa: E402


def sleepers(tag):
    """PIDs of the processes running `sleep <tag>` (this test's build and its detached grandchild)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", tag.encode()]:
            found.append(int(pid))
    return sorted(found)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z" not in f.read()
    except OSError:
        return False


def test(env):
    tag = f"3600.{random.randrange(10**6):06d}"  # a sleep no other process on this host runs
    repo = os.path.join(env.dir, "repo")
    make_repo(repo)
    job = os.path.join(env.dir, "job.yaml")
    with open(job, "w") as f:
        f.write(f"""name: detaching-build
build: {{recipe: command, command: [sh, -c, "setsid sleep {tag} </dev/null >/dev/null 2>&1 & exec sleep {tag}"],
        artifacts: [bench], timeout: 3000s}}
run: {{machine_group: local, command: [./bench], runs: 1, timeout: 60s}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}}
""")
    try:
        env.start_daemon()
        env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
        wait_for(lambda: len(sleepers(tag)) == 2, 120, "the build and its detached grandchild never both ran")
        left = sleepers(tag)
        env.kill_daemon(signal.SIGKILL)
        time.sleep(1)
        check(all(alive(pid) for pid in left), f"the build's processes did not survive the daemon's SIGKILL: {left}")

        env.start_daemon()
        wait_for(lambda: not any(alive(pid) for pid in left), 30,
                 f"the restarted bisectd left the last one's processes running: {left}")
        log = open(env.log_path).read()
        check(re.search(r"stopped [2-9] process\(es\) the previous bisectd on this data dir left running", log),
              f"the restart did not say what it stopped:\n{log[-2000:]}")
    finally:
        for pid in sleepers(tag):
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(run("orphans", test))
