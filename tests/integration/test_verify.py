#!/usr/bin/env python3
"""Culprit verification before mailing (issue 6), on the userspace pipeline with the real daemon.

(a) layout: the culprit only moves the hot loop; its effect disappears when both builds get the job's
    `verify.layout_env` (EXTRA_CFLAGS=-DFORCE_ALIGN, the alignment option's role). The bisection finds it,
    the verifier rebuilds culprit and parent with the switch, sees the shift vanish, and the mail's subject
    says "(likely code-layout artefact)". The revert test runs too and must see performance come back.
(b) comment: a comment-only commit right before the real culprit is made to look guilty by a constructed
    sample history (planted runs at the bad level, as noise might produce). The verifier must find it
    implausible, the search moves on, and the mail names the real culprit.
Pass `layout` or `comment` to run one part."""
import json
import os
import random
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, run, wait_for, write_job  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = "verify-demo"


def make_repo(dest, scenario):
    out = subprocess.run([sys.executable, os.path.join(HERE, "verify_repo.py"), dest, scenario], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def chain(repo, good, bad):
    out = subprocess.run(["git", "-C", repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}"],
                         check=True, capture_output=True, text=True).stdout.split()
    return [good] + out


def add_tree(env, repo, verify):
    job = write_job(os.path.join(env.dir, "job.yaml"), name=JOB, seconds="0.2", threshold="5%",
                    extra=f"verify: {verify}\n")
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job, "--notify", "Watcher <watch@example.org>")
    wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 180, "the head was never measured")


def bisect(env, good, bad):
    out = env.ctl("bisect", "start", "--tree", "demo", "--good", good, "--bad", bad, "--json").stdout
    bid = str(json.loads(out)["id"])
    r = env.ctl("wait", bid, "--timeout", "170", expect=None)
    show = env.ctl_json("show", bid)
    check(r.returncode == 0, f"wait: exit {r.returncode}: {r.stderr[-300:]}\nshow: {json.dumps(show)[:3000]}")
    return show


def subject_of(text):
    for line in text.split("\n"):
        if line.startswith("Subject:"):
            return line
    return ""


def test_layout(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "layout")
    env.start_smtp()
    env.start_daemon()
    add_tree(env, repo, "{pairs: 5, layout_env: {EXTRA_CFLAGS: -DFORCE_ALIGN}}")
    started = time.time()
    show = bisect(env, shas["base"], shas["head"])
    print(f"layout: bisection took {time.time() - started:.0f}s, {show['runs']} runs, {show['builds']} builds")
    v = show.get("verification", {})
    print("layout: verification " + json.dumps(v, indent=1))
    check(show["state"] == "found" and show["culprit"] == shas["culprit"], f"culprit: {show['culprit']}")
    check(v.get("layout", {}).get("artefact") is True and v.get("layout_artefact") is True, f"verification: {v}")
    check(abs(v["layout"]["layout_change"]) < 0.05 and v["layout"]["change"] < -0.1, f"layout numbers: {v['layout']}")
    check(v.get("revert", {}).get("recovered", 0) > 0.7, f"revert: {v.get('revert')}")
    check("plausibility" in v and not v["plausibility"]["implausible"], f"plausibility: {v.get('plausibility')}")
    wait_for(lambda: len(env.mails()) >= 1, 60, "no mail arrived")
    mails = env.mails()
    check(len(mails) == 1, f"{len(mails)} mails")
    subject = subject_of(mails[0][0])
    print("layout: " + subject)
    check(shas["culprit"][:10] in subject and "likely code-layout artefact" in subject, f"subject: {subject}")
    check("WARNING: this is likely a code-layout artefact" in mails[0][0], "the body lacks the layout warning")


def plant(env, commits, bad_from, comment):
    """A constructed sample history: 3 runs per commit at the level its build really has, except the
    comment-only commit, whose runs sit at the bad level (what noise made it look like)."""
    db = sqlite3.connect(os.path.join(env.data, "bisectd.db"))
    now = int(time.time())
    for i, sha in enumerate(commits):
        bad = i >= bad_from or sha == comment
        level = 1e7 / (240 if bad else 200)
        cur = db.execute("INSERT INTO requests (tree, job, commit_sha, purpose, machine_group, runs, variant, state, "
                         "created_at, updated_at) VALUES ('demo', ?, ?, 'bisect', 'local', 3, '', 'done', ?, ?)",
                         (JOB, sha, now, now))
        for run_index in range(3):
            value = level * (1 + random.uniform(-0.005, 0.005))
            db.execute("INSERT INTO samples (request_id, tree, job, commit_sha, variant, machine, boot_id, run, "
                       "metrics, verification, created_at) VALUES (?, 'demo', ?, ?, '', 'local', ?, ?, ?, 0, ?)",
                       (cur.lastrowid, JOB, sha, f"planted-{i}", run_index,
                        json.dumps({"bench.ops_per_sec": value}), now))
    db.commit()
    db.close()


def test_comment(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "comment")
    env.start_smtp()
    env.start_daemon()
    add_tree(env, repo, "{confirm: false, revert: false, layout: false}")
    env.kill_daemon(15)
    commits = chain(repo, shas["base"], shas["head"])
    plant(env, commits, commits.index(shas["culprit"]), shas["comment"])
    env.start_daemon()
    started = time.time()
    show = bisect(env, shas["base"], shas["head"])
    print(f"comment: bisection took {time.time() - started:.0f}s, {show['runs']} runs, {show['builds']} builds")
    events = [e["message"] for e in show.get("events", [])]
    print("comment: events\n  " + "\n  ".join(events))
    check(show["state"] == "found" and show["culprit"] == shas["culprit"],
          f"culprit {show['culprit']} (comment-only {shas['comment']}, real {shas['culprit']})")
    check(any("implausible" in e and shas["comment"][:7] in e for e in events),
          "no event says the comment-only commit is implausible")
    wait_for(lambda: len(env.mails()) >= 1, 60, "no mail arrived")
    mails = env.mails()
    check(len(mails) == 1, f"{len(mails)} mails")
    subject = subject_of(mails[0][0])
    print("comment: " + subject)
    check(shas["culprit"][:10] in subject and shas["comment"][:10] not in subject, f"subject: {subject}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["layout", "comment"]
    code = 0
    for part in parts:
        code = max(code, run(f"verify-{part}", {"layout": test_layout, "comment": test_comment}[part]))
    sys.exit(code)
