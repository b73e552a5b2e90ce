#!/usr/bin/env python3
"""A failure is evidence, not a verdict (issue 30, item 2), through the real daemon. The bad head's benchmark hangs on
its first visit (every run past the job's run timeout) and works afterwards: the timeout is retried like infra and the
bisection names the planted culprit (before, the head was flagged `unrunnable` for good and the bisection failed at
once). The first midpoint's benchmark fails the same way every time: after a second attempt it is skipped, and `show`
lists it as skipped with why. `results` shows its flag with the reason; a changed job under the same name ignores it;
`commit clear` (token required) drops it.

The bisection is `classic` so that the first midpoint is the failing commit whatever the samples say (chain 0..8:
midpoint 4; skipped, then 3, 5 and 6)."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "faults"))
from harness import check, run  # noqa: E402
from faults_lib import BAD, GOOD, NORMAL_BENCH, make_tree, query  # noqa: E402

CULPRIT = 6       # commits 6.. are slower
FAILING = 4       # the classic midpoint of 0..8: its benchmark always exits 3
RUNS = 2          # runs per visit
RUN_TIMEOUT = 2   # seconds: the hanging head's runs are killed then

# The head's benchmark: every run that starts within HANG_WINDOW seconds of its first one hangs (the box hangs for a
# while), so its first visit times out whole, whichever machine and request it is (both its runs start in the window:
# the first is killed after RUN_TIMEOUT). It keeps the time in a file outside the worktree: the job runs unsandboxed.
HANG_WINDOW = 4
HANG_ONCE = """import os, random, time
first = {first!r}
if not os.path.exists(first):
    open(first, "w").write(str(time.time()))
with open({runs!r}, "a") as f:
    f.write("run\\n")
if time.time() - float(open(first).read() or 0) < {window}:
    time.sleep(60)  # the box hangs: killed at the job's run timeout
print("bench.ops_per_sec: %.1f" % ({mean} * (1 + random.gauss(0, 0.01))))
"""
ALWAYS_FAILS = """import sys
print("progress: warming up")
sys.stderr.write("bench: cannot map the test file\\n")
sys.exit(3)
"""

JOB = f"""name: flaky-job
build: {{recipe: command, command: [sh, build.sh], artifacts: [bench.py], timeout: 60s}}
run: {{machine_group: local, command: [python3, bench.py], runs: {RUNS}, timeout: {RUN_TIMEOUT}s}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}}
bisect: {{method: classic}}
verify: {{confirm: false, revert: false, layout: false}}
"""


def benches(env):
    out = []
    for i in range(9):
        mean = GOOD if i < CULPRIT else BAD
        if i == FAILING:
            out.append(ALWAYS_FAILS)
        elif i == 8:
            out.append(HANG_ONCE.format(first=os.path.join(env.dir, "head-first-run"),
                                        runs=os.path.join(env.dir, "head-runs"), window=HANG_WINDOW, mean=mean))
        else:
            out.append(NORMAL_BENCH.format(mean=mean))
    return out


def flags_of(env, sha):
    return env.ctl_json("results", sha, "--tree", "demo")["flags"]


def post_without_token(env, path):
    request = urllib.request.Request(env.url + path, data=b'{"tree": "demo"}', method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test(env):
    shas = make_tree(os.path.join(env.dir, "repo"), benches(env))
    head, failing, culprit = shas[8], shas[FAILING], shas[CULPRIT]
    job = os.path.join(env.dir, "job.yaml")
    with open(job, "w") as f:
        f.write(JOB)
    config = os.path.join(env.dir, "unsandboxed.yaml")  # the hang counter lives outside the worktree
    with open(config, "w") as f:
        f.write("sandbox: none\n")
    started = time.monotonic()
    env.start_daemon("--config", config)
    env.ctl("tree", "add", "demo", os.path.join(env.dir, "repo"), "--branch", "master", "--job", job)
    bid = str(json.loads(env.ctl("bisect", "start", "--tree", "demo", "--good", shas[0], "--bad", head,
                                 "--json").stdout)["id"])
    r = env.ctl("wait", bid, "--timeout", "240", expect=None)
    elapsed = time.monotonic() - started
    show = env.ctl_json("show", bid)
    check(r.returncode == 0, f"wait: exit {r.returncode}: {r.stderr[-300:]}\nshow: {json.dumps(show)[:3000]}")
    check(show["state"] == "found" and show["culprit"] == culprit,
          f"state {show['state']}, culprit {show.get('culprit')}: expected {culprit}")

    # The head hung once: its first visit timed out whole and was queued again (infra's back-off), never failed; it
    # was measured by a later visit, and nothing flags it.
    short = head[:10]
    with open(env.log_path) as f:
        timed_out = [line for line in f if f" {short}): timeout: no run gave" in line]
    check(timed_out and "retry in 30s" in timed_out[0], f"no visit of the head timed out and was retried: {timed_out}")
    states = query(env, "SELECT id, purpose, state, attempts FROM requests WHERE commit_sha = ?", head)
    check(all(state != "failed" for _, _, state, _ in states), f"a request of the head failed: {states}")
    with open(os.path.join(env.dir, "head-runs")) as f:
        head_runs = len(f.read().split())
    check(flags_of(env, head) == [], f"a timeout flagged the head: {flags_of(env, head)}")

    # The failing commit: two attempts, then skipped, and show says why.
    tested = {c["commit"]: c for c in show["tested"]}
    check(failing in tested and tested[failing]["status"] == "skipped", f"commit {FAILING} not listed as skipped: "
                                                                         f"{tested.get(failing)}")
    why = tested[failing].get("skipped_because", "")
    check("unrunnable (2 failures)" in why and "exit 3" in why, f"skipped_because: {why!r}")
    text = env.ctl("show", bid).stdout
    check(f"skipped {failing[:10]}" in text and "unrunnable" in text, f"show's text does not say why:\n{text}")
    attempts = query(env, "SELECT SUM(attempts) FROM requests WHERE commit_sha = ?", failing)[0][0]
    check(attempts == 2, f"commit {FAILING} was tried {attempts} times, expected 2")

    # `results` shows the flag with its reason.
    flags = flags_of(env, failing)
    check(len(flags) == 1 and flags[0]["flag"] == "unrunnable" and flags[0]["count"] == 2 and flags[0]["skips"],
          f"results flags: {flags}")
    check("exit 3" in flags[0]["reason"], f"the flag's reason: {flags[0]['reason']!r}")
    text = env.ctl("results", failing, "--tree", "demo").stdout
    check("skips the commit" in text and "commit clear" in text, f"results' text:\n{text}")

    # A changed job under the same name starts clean: the flag is shown as ignored.
    fixed = os.path.join(env.dir, "fixed.yaml")
    with open(fixed, "w") as f:
        f.write(JOB + "# the benchmark's test file fixed\n")
    env.ctl("tree", "set", "demo", "--job", fixed)
    flags = flags_of(env, failing)
    check(len(flags) == 1 and not flags[0]["current"] and not flags[0]["skips"], f"after tree set --job: {flags}")

    # Clearing needs the token; bisectctl has it.
    status = post_without_token(env, f"/api/v1/commits/{failing}/clear")
    check(status == 401, f"POST clear without a token: {status}")
    cleared = env.ctl_json("commit", "clear", failing[:12], "--tree", "demo")
    check(cleared["cleared"] == 1 and cleared["job"] == "flaky-job", f"commit clear: {cleared}")
    check(flags_of(env, failing) == [], f"flags left after commit clear: {flags_of(env, failing)}")
    print(f"flaky_runs: culprit {culprit[:10]} found; the head's benchmark ran {head_runs} times, its first visit "
          f"timed out; requests of the head: {states}; commit {FAILING} "
          f"skipped after {attempts} attempts; {show['runs']} runs, {show['builds']} builds; daemon start to "
          f"verdict {elapsed:.1f} s")


if __name__ == "__main__":
    sys.exit(run("flaky_runs", test))
