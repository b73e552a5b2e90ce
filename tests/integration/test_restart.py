#!/usr/bin/env python3
"""SIGKILL in the middle of a bisection: after a restart the same culprit is found, no stored sample is
lost or duplicated, and exactly one mail is sent."""
import os
import signal
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, make_repo, run, wait_for, write_job  # noqa: E402


def sample_rows(env):
    db = sqlite3.connect(f"file:{os.path.join(env.data, 'bisectd.db')}?mode=ro", uri=True)
    try:
        return db.execute("SELECT id, request_id, commit_sha, boot_id, run FROM samples").fetchall()
    finally:
        db.close()


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_smtp()
    env.start_daemon()
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job, "--public")  # the author is mailed
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["base"], "--bad", shas["head"]).stdout.strip()
    check(bid.isdigit(), f"bisect start printed {bid!r}")

    wait_for(lambda: env.ctl_json("show", bid)["runs"] >= 9, 600, "the bisection never got going")
    check(env.ctl_json("show", bid)["state"] == "running", "finished before the kill: make the test harder")
    env.kill_daemon(signal.SIGKILL)
    before = sample_rows(env)

    env.start_daemon()
    r = env.ctl("wait", bid, "--timeout", "900", expect=None)
    show = env.ctl_json("show", bid)
    check(r.returncode == 0 and show["state"] == "found", f"after restart: {show['state']}, {r.stderr[-300:]}")
    check(show["culprit"] == shas["culprit"], f"culprit {show['culprit']} != planted {shas['culprit']}")

    after = sample_rows(env)
    check(set(before) <= set(after), "samples stored before the kill are gone")
    keys = [(commit, boot, n) for (_, _, commit, boot, n) in after]
    check(len(keys) == len(set(keys)), "a sample was stored twice")

    wait_for(lambda: len(env.mails()) >= 1, 120, "no mail arrived")
    env.kill_daemon(signal.SIGTERM)  # a clean stop and start must not send it again
    env.start_daemon()
    wait_for(lambda: env.ctl_json("report", bid)["sent"], 60, "the report is not marked sent")
    check(len(env.mails()) == 1, f"{len(env.mails())} mails arrived, expected exactly one")


if __name__ == "__main__":
    sys.exit(run("restart", test))
