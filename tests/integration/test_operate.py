#!/usr/bin/env python3
"""Operating the robot through bisectctl: a job for a group no machine has is refused with the groups that
exist; a job name another tree uses is refused; a second daemon on the same data dir refuses to start; a running bisection is cancelled (its queued work dropped),
retried to its culprit, its logs read, then removed with its samples; tree show/set change a tree in place; the
watcher's decisions are listed; a bisection whose work no machine can take fails with the reason."""
import os
import signal
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, check, free_port, git, make_repo, one_line_error, run, wait_for, write_job  # noqa: E402


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--split-at", "8")
    job = write_job(os.path.join(env.dir, "job.yaml"))
    nowhere = write_job(os.path.join(env.dir, "nowhere.yaml"), name="nowhere")
    with open(nowhere) as f:
        text = f.read().replace("machine_group: local", "machine_group: cascade-lake")
    with open(nowhere, "w") as f:
        f.write(text)
    env.start_daemon()

    second = subprocess.run([os.path.join(BIN, "bisectd"), "--data-dir", env.data, "--listen",
                             f"127.0.0.1:{free_port()}"], capture_output=True, text=True, timeout=60)
    check(second.returncode == 1 and f"in use by another bisectd (pid {env.daemon.pid}" in second.stderr,
          f"a second daemon on the same data dir: exit {second.returncode}, {second.stderr[-400:]!r}")
    for name in ("token", "bisectd.db"):
        mode = stat.S_IMODE(os.stat(os.path.join(env.data, name)).st_mode)
        check(mode == 0o600, f"{name} has mode {oct(mode)}, not 0600")

    one_line_error(env.ctl("tree", "add", "lost", repo, "--branch", "master", "--job", nowhere, expect=1),
                   "cascade-lake", "local")
    check(env.ctl_json("tree", "list")["trees"] == [], "a tree was stored although its job cannot run")

    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job, "--poll-interval", "1h")
    other = os.path.join(env.dir, "other-repo")
    make_repo(other, "--commits", "4")
    one_line_error(env.ctl("tree", "add", "other", other, "--branch", "master", "--job",
                           write_job(os.path.join(env.dir, "same-name.yaml"), runs=5), expect=1),
                   "demo-throughput", "demo")

    shown = env.ctl("tree", "show", "demo").stdout
    check("poll:     1h" in shown and "mail:     private" in shown, f"tree show:\n{shown}")
    env.ctl("tree", "set", "demo", "--notify", "ops@example.org", "--poll-interval", "2h")
    tree = env.ctl_json("tree", "show", "demo")["tree"]
    check(tree["notify"] == ["ops@example.org"] and tree["poll_interval_s"] == 7200, f"tree set: {tree}")

    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["split"], "--bad", shas["head"]).stdout.strip()
    wait_for(lambda: env.ctl_json("show", bid)["runs"] > 0, 300, "the bisection measured nothing")
    env.ctl("bisect", "cancel", bid)
    show = env.ctl_json("show", bid)
    check(show["state"] == "cancelled", f"state after cancel: {show['state']}")
    status = env.ctl_json("status")["queue"]
    wait_for(lambda: env.ctl_json("status")["queue"].get("queued", 0) == 0, 60,
             f"queued work of the cancelled bisection stayed: {status}")

    env.ctl("bisect", "retry", bid)
    r = env.ctl("wait", bid, "--timeout", "900", expect=None)
    show = env.ctl_json("show", bid)
    check(r.returncode == 0 and show["state"] == "found", f"after retry: exit {r.returncode}, {show['state']}")
    check(show["culprit"] == shas["culprit"], f"culprit {show['culprit']} != planted {shas['culprit']}")

    request = max(r["id"] for r in show["requests"] if r["state"] == "done")
    runs = env.ctl("logs", "request", str(request)).stdout
    check("bench.ops_per_sec" in runs, f"logs request {request}: {runs[:400]!r}")
    build = env.ctl("logs", "build", str(request)).stdout
    check("bench" in build, f"logs build {request}: {build[:400]!r}")
    one_line_error(env.ctl("logs", "request", "999999", expect=1), "request 999999 not found")

    metrics = env.ctl_json("noise", "--tree", "demo")["metrics"]  # the tree's job
    check(any(m["name"] == "bench.ops_per_sec" for m in metrics), f"noise --tree demo: {metrics}")
    one_line_error(env.ctl("noise", "--tree", "nope", expect=1), "tree 'nope' not found")

    detections = env.ctl_json("detections", "--tree", "demo")["detections"]
    check(isinstance(detections, list), f"detections: {detections}")

    samples = len(env.ctl_json("results", shas["culprit"], "--tree", "demo")["samples"])
    check(samples > 0, "the culprit has no samples")
    by_ref = env.ctl_json("results", "refs/heads/master", "--tree", "demo")
    master = git(repo, "rev-parse", "master")
    check(by_ref["commit"] == master, f"results of refs/heads/master: commit {by_ref['commit']}, not {master}")
    check(by_ref["samples"] == env.ctl_json("results", master, "--tree", "demo")["samples"],
          "results by ref and by sha differ")
    one_line_error(env.ctl("results", "master", expect=2), "a ref needs --tree")
    one_line_error(env.ctl("results", "no-such-ref", "--tree", "demo", expect=1), "unknown revision 'no-such-ref'")
    env.ctl("bisections", "rm", bid, "--purge")
    one_line_error(env.ctl("show", bid, expect=1), bid)
    left = len(env.ctl_json("results", shas["culprit"], "--tree", "demo")["samples"])
    check(left == 0, f"{left} samples of the culprit left after rm --purge")

    # The lab loses the tree's group: a bisection's request no machine can take fails it, naming why.
    lab = os.path.join(env.dir, "elsewhere.yaml")
    with open(lab, "w") as f:
        f.write("machines:\n  - {name: far0, group: elsewhere, backend: local}\n")
    config = os.path.join(env.dir, "bisectd.yaml")
    with open(config, "w") as f:
        f.write("placement_timeout: 1s\n")
    env.kill_daemon(signal.SIGTERM)
    env.start_daemon("--lab", lab, "--config", config)
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["split"], "--bad", shas["head"]).stdout.strip()
    wait_for(lambda: env.ctl_json("show", bid)["state"] != "running", 60, "an unplaceable bisection kept running")
    show = env.ctl_json("show", bid)
    check(show["state"] == "failed" and "could not be placed: no machine is in group 'local' (groups: elsewhere)"
          in (show.get("error") or ""), f"unplaceable: {show['state']}: {show.get('error')}")


if __name__ == "__main__":
    sys.exit(run("integration.operate", test))
