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


def api_get(env, token, path):
    """GET `path`: (seconds it took, 10 at most; its JSON or None)."""
    req = urllib.request.Request(env.url + path, headers={"Authorization": "Bearer " + token})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body = json.loads(r.read())
    except OSError:
        return 10.0, None
    return time.monotonic() - started, body


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

    during = []  # API latencies while get_maintainer.pl ran
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        running = get_maintainer_running()
        status_took, _ = api_get(env, token, "/api/v1/status")
        running = get_maintainer_running() or running
        show_took, bisection = api_get(env, token, "/api/v1/bisections/" + bid)
        if running or get_maintainer_running():  # it ran when a call began or ended
            during.append(max(status_took, show_took))
        if bisection and bisection.get("state") != "running":
            break
        time.sleep(0.2)
    show = env.ctl_json("show", bid)
    check(show["state"] == "found" and show["culprit"] == shas["culprit"], f"bisection: {show['state']}")
    print(f"hostile_report: {len(during)} API polls while get_maintainer.pl ran, slowest {max(during or [0]):.2f} s")
    check(max(during or [0]) < 2.0, f"the API stalled while get_maintainer.pl ran: {max(during or [0]):.1f} s")
    check(len(during) >= 3, f"get_maintainer.pl was seen running for {len(during)} polls only")

    report = env.ctl_json("report", bid)
    recipients = json.dumps([report.get("to"), report.get("cc")])
    check("maint@example.org" in recipients, f"get_maintainer.pl's good address is not a recipient: {recipients}")
    check("victim@example.net" not in json.dumps(report) and "evil@example.org" not in recipients,
          f"the hostile get_maintainer.pl line reached the report: {recipients}")


if __name__ == "__main__":
    sys.exit(run("hostile_report", test))
