#!/usr/bin/env python3
"""What a killed bisectd left running does not outlive it for long: a build that detaches a grandchild (`setsid`)
is running when bisectd is SIGKILLed. Unsandboxed, both processes survive the kill (they are nobody's children now)
and the next bisectd on the same data dir stops them before it starts anything, saying so in its log. Sandboxed
(bwrap: new pid namespace, --die-with-parent) they die with the daemon."""
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import alive, check, make_repo, run, sleepers, wait_for  # noqa: E402


def start_build(env, tag, *daemon_args):
    """bisectd on a new data dir with the detaching build's tree: returns the build's two pids once both run."""
    env.data = os.path.join(env.dir, f"data-{tag}")
    repo = os.path.join(env.dir, f"repo-{tag}")
    make_repo(repo)
    job = os.path.join(env.dir, f"job-{tag}.yaml")
    with open(job, "w") as f:
        f.write(f"""name: detaching-build
build: {{recipe: command, command: [sh, -c, "setsid sleep {tag} </dev/null >/dev/null 2>&1 & exec sleep {tag}"],
        artifacts: [bench], timeout: 3000s}}
run: {{machine_group: local, command: [./bench], runs: 1, timeout: 60s}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}}
""")
    env.start_daemon(*daemon_args)
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    wait_for(lambda: len(sleepers(tag)) == 2, 120, "the build and its detached grandchild never both ran")
    return sleepers(tag)


def unsandboxed(env, tag):
    """sandbox: none: the build's processes outlive the SIGKILLed daemon; its successor stops them at start-up."""
    config = os.path.join(env.dir, "unsandboxed.yaml")
    with open(config, "w") as f:
        f.write("sandbox: none\n")
    left = start_build(env, tag, "--config", config)
    env.kill_daemon(signal.SIGKILL)
    time.sleep(1)
    check(all(alive(pid) for pid in left), f"the build's processes did not survive the daemon's SIGKILL: {left}")
    env.start_daemon("--config", config)
    wait_for(lambda: not any(alive(pid) for pid in left), 30,
             f"the restarted bisectd left the last one's processes running: {left}")
    log = open(env.log_path).read()
    check(re.search(r"stopped [2-9] process\(es\) the previous bisectd on this data dir left running", log),
          f"the restart did not say what it stopped:\n{log[-2000:]}")
    env.kill_daemon(signal.SIGTERM)


def sandboxed(env, tag):
    """The default sandbox (bwrap, when it works here): the build dies with the daemon that started it."""
    left = start_build(env, tag)
    if "sandbox: builds, local benchmarks and get_maintainer.pl run under bwrap" not in open(env.log_path).read():
        print("bwrap is not usable here: the sandboxed part is not exercised")
        return
    env.kill_daemon(signal.SIGKILL)
    wait_for(lambda: not any(alive(pid) for pid in left), 30,
             f"the sandboxed build's processes outlived the daemon's SIGKILL: {left}")


def test(env):
    tags = [f"3600.{random.randrange(10**6):06d}" for _ in range(2)]  # sleeps no other process on this host runs
    try:
        unsandboxed(env, tags[0])
        sandboxed(env, tags[1])
    finally:
        for tag in tags:
            for pid in sleepers(tag):
                os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(run("orphans", test))
