#!/usr/bin/env python3
"""A public tree's get_maintainer.pl is the tree's code: while a slow one runs for a report, the API answers
(report composition is off the I/O thread), and what it prints reaches the mail only as plausible addresses (a line
with a CR, a header injection, is left out)."""
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, make_repo, run, write_job  # noqa: E402

SLEEP = 15  # seconds get_maintainer.pl takes


def get_maintainer_running():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"scripts/get_maintainer.pl" in f.read():
                    return True
        except OSError:
            continue
    return False


def status_seconds(env, token):
    """How long GET /api/v1/status takes (10 s at most)."""
    req = urllib.request.Request(env.url + "/api/v1/status", headers={"Authorization": "Bearer " + token})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()
    except OSError:
        return 10.0
    return time.monotonic() - started


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--commits", "10", "--regress-at", "6", "--broken-at", "100", "--merge-at", "100",
                     "--get-maintainer-sleep", str(SLEEP))
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_daemon()
    with open(os.path.join(env.data, "token")) as f:
        token = f.read().strip()
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job, "--public")
    out = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["base"], "--bad", shas["head"], "--json").stdout
    bid = str(json.loads(out)["id"])

    during = []  # status latencies while get_maintainer.pl ran
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        running = get_maintainer_running()
        seconds = status_seconds(env, token)
        if running:
            during.append(seconds)
        if env.ctl_json("show", bid)["state"] not in ("running", "queued", "pending"):
            break
        time.sleep(0.3)
    show = env.ctl_json("show", bid)
    check(show["state"] == "found" and show["culprit"] == shas["culprit"], f"bisection: {show['state']}")
    print(f"hostile_report: {len(during)} status calls while get_maintainer.pl ran, slowest {max(during or [0]):.2f} s")
    check(len(during) >= 3, f"get_maintainer.pl was seen running for {len(during)} polls only")
    check(max(during) < 2.0, f"the API stalled while get_maintainer.pl ran: {max(during):.1f} s")

    report = env.ctl_json("report", bid)
    recipients = json.dumps([report.get("to"), report.get("cc")])
    check("maint@example.org" in recipients, f"get_maintainer.pl's good address is not a recipient: {recipients}")
    check("victim@example.net" not in json.dumps(report) and "evil@example.org" not in recipients,
          f"the hostile get_maintainer.pl line reached the report: {recipients}")


if __name__ == "__main__":
    sys.exit(run("hostile_report", test))
