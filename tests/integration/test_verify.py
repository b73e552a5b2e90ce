#!/usr/bin/env python3
"""Culprit verification before mailing, on the userspace pipeline with the real daemon.

(a) layout: the culprit only moves the hot loop; its effect disappears when both builds get the job's
    `verify.layout_env` (EXTRA_CFLAGS=-DFORCE_ALIGN, the alignment option's role). The bisection finds it,
    the verifier rebuilds culprit and parent with the switch, sees the shift vanish, and the mail's subject
    says "(likely code-layout artefact)". The revert test runs too and must see performance come back.
(b) comment: a comment-only commit right before the real culprit is made to look guilty by a constructed
    sample history (planted runs at the bad level, as noise might produce). The verifier must find it
    implausible, the search moves on, and the mail names the real culprit.
(a2) layout_broken: the layout switch breaks the build: reported once, never retried, no artefact claim.
(a3) revert_conflict: the culprit's revert conflicts on the bad head: reported, the bisection still ends.
(c) comment_defaults: the same history with the engine's confirmation pairs on: they refute the planted
    runs before the verifier is asked, and the mail shows the real shift.
Pass `layout`, `layout_broken`, `revert_conflict`, `comment` or `comment_defaults` to run one part."""
import email
import email.policy
import json
import os
import random
import re
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


def bisect_scenario(env, kind, verify):
    """A generated tree of `kind`, the daemon with an SMTP server, the tree registered with `verify`, and one
    bisection base..head that must find the planted culprit. Returns (shas, show, verification)."""
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, kind)
    env.start_smtp()
    env.start_daemon()
    add_tree(env, repo, verify)
    started = time.time()
    show = bisect(env, shas["base"], shas["head"])
    print(f"{kind}: bisection took {time.time() - started:.0f}s, {show['runs']} runs, {show['builds']} builds")
    check(show["state"] == "found" and show["culprit"] == shas["culprit"], f"culprit: {show['culprit']}")
    return shas, show, show.get("verification", {})


def subject_of(text):
    """The decoded, unfolded Subject header."""
    return str(email.message_from_string(text, policy=email.policy.default)["Subject"])


def test_layout(env):
    shas, show, v = bisect_scenario(env, "layout", "{pairs: 5, layout_env: {EXTRA_CFLAGS: -DFORCE_ALIGN}}")
    print("layout: verification " + json.dumps(v, indent=1))
    n = v.get("numbers", {})
    check(n.get("layout", {}).get("artefact") is True and v.get("layout_artefact") is True, f"verification: {v}")
    check("likely a code-layout artefact" in v["layout"], f"layout line: {v['layout']}")
    check(abs(n["layout"]["layout_change"]) < 0.05 and n["layout"]["change"] < -0.1, f"layout numbers: {n['layout']}")
    check(n.get("revert", {}).get("recovered", 0) > 0.7 and "comes back" in v["revert"], f"revert: {v.get('revert')}")
    check(n.get("plausibility", {}).get("implausible") is False, f"plausibility: {v.get('plausibility')}")
    # A shift of 30 % at 0.5 % noise: the sequential test stops at its minimum of three pairs (of at most five).
    check(n.get("confirm", {}).get("pairs") == 3 and n["confirm"].get("stopped_early") is True and
          "the shift holds" in v["confirm"], f"confirm: {v.get('confirm')}")
    wait_for(lambda: len(env.mails()) >= 1, 60, "no mail arrived")
    mails = env.mails()
    check(len(mails) == 1, f"{len(mails)} mails")
    subject = subject_of(mails[0][0])
    print("layout: " + subject)
    check(shas["culprit"][:10] in subject and "likely code-layout artefact" in subject, f"subject: {subject}")
    check("WARNING: this is likely a code-layout artefact" in mails[0][0], "the body lacks the layout warning")


def test_layout_broken(env):
    """The layout rebuild fails (the switch breaks the build): the step is reported, never retried, and the
    bisection still ends with its culprit, without an artefact claim."""
    _, show, v = bisect_scenario(
        env, "layout", '{pairs: 5, revert: false, layout_env: {EXTRA_CFLAGS: "-include /nonexistent/align.h"}}')
    print("layout_broken: " + v.get("layout", "-"))
    check("could not measure" in v.get("layout", "") and "build_failed" in v["layout"],
          f"layout: {v.get('layout')}")
    check(v.get("layout_artefact") is False, f"verification: {v}")
    def layout_visits():
        return [e["message"] for e in env.ctl_json("show", str(show["id"]))["events"] if "(layout)" in e["message"]]
    reported = layout_visits()
    time.sleep(3)  # a few more ticks: nothing may be queued again
    later = layout_visits()
    check(later == reported, f"layout visits queued after the step was reported: {later[len(reported):]}")
    # Two visits per side; a failed build is tried once more within its request (a failure is evidence, not a
    # verdict), never queued again. The parent's side may move to a commit with the same binary once the
    # bisection finds it: that commit gets its own two visits.
    per_commit = {m.split()[1]: sum(1 for other in later if other.split()[1] == m.split()[1]) for m in later}
    check(len(per_commit) in (2, 3) and set(per_commit.values()) == {2},
          f"layout visits per commit {per_commit}, expected 2 each: {later}")
    check(env.ctl_json("status")["queue"].get("queued", 0) == 0, "requests still queued after the bisection")
    wait_for(lambda: len(env.mails()) >= 1, 60, "no mail arrived")
    check("artefact" not in subject_of(env.mails()[0][0]), "the subject claims an artefact")


def test_revert_conflict(env):
    """A later commit rewrote the culprit's line: the revert does not apply, which is reported (with the
    conflicting path) and does not fail the bisection."""
    _, _, v = bisect_scenario(env, "conflict", "{pairs: 5, layout: false}")
    print("revert_conflict: " + v.get("revert", "-"))
    check("does not apply cleanly" in v.get("revert", "") and "work.h" in v["revert"], f"revert: {v.get('revert')}")
    check(v["numbers"]["revert"]["applies"] is False and "layout" not in v, f"verification: {v}")
    wait_for(lambda: len(env.mails()) >= 1, 60, "no mail arrived")


def plant(env, commits, bad_from, comment):
    """A constructed sample history: 3 runs per commit at the level its build really has, except the
    comment-only commit: 2 runs at the bad level on two boots (what noise made it look like; on one boot the
    engine's own replication on a fresh boot would refute it before the verifier sees it). Once the verifier rules it
    out, the engine's own runs there outvote the planted pair, so the mail's culprit/parent table is right."""
    db = sqlite3.connect(os.path.join(env.data, "bisectd.db"))
    now = int(time.time())
    for i, sha in enumerate(commits):
        bad = i >= bad_from or sha == comment
        level = 1e7 / (240 if bad else 200)
        cur = db.execute("INSERT INTO requests (tree, job, commit_sha, purpose, machine_group, runs, variant, state, "
                         "created_at, updated_at) VALUES ('demo', ?, ?, 'bisect', 'local', 3, '', 'done', ?, ?)",
                         (JOB, sha, now, now))
        for run_index in range(2 if sha == comment else 3):
            value = level * (1 + random.uniform(-0.005, 0.005))
            sample = db.execute("INSERT INTO samples (request_id, tree, job, commit_sha, variant, machine, boot_id, "
                                "run, verification, created_at) VALUES (?, 'demo', ?, ?, '', 'local', ?, ?, 0, ?)",
                                (cur.lastrowid, JOB, sha,
                                 f"planted-{i}-{run_index}" if sha == comment else f"planted-{i}", run_index, now))
            db.execute("INSERT INTO sample_metrics (sample_id, name, value) VALUES (?, 'bench.ops_per_sec', ?)",
                       (sample.lastrowid, value))
    db.commit()
    db.close()


def comment_scenario(env, verify):
    """Runs the comment-only scenario with the job's `verify` section; returns (shas, show, subject)."""
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "comment")
    env.start_smtp()
    env.start_daemon()
    add_tree(env, repo, verify)
    env.kill_daemon(15)
    commits = chain(repo, shas["base"], shas["head"])
    plant(env, commits, commits.index(shas["culprit"]), shas["comment"])
    env.start_daemon()
    started = time.time()
    show = bisect(env, shas["base"], shas["head"])
    print(f"comment: bisection took {time.time() - started:.0f}s, {show['runs']} runs, {show['builds']} builds")
    print("comment: events\n  " + "\n  ".join(e["message"] for e in show.get("events", [])))
    check(show["state"] == "found" and show["culprit"] == shas["culprit"],
          f"culprit {show['culprit']} (comment-only {shas['comment']}, real {shas['culprit']})")
    wait_for(lambda: len(env.mails()) >= 1, 60, "no mail arrived")
    mails = env.mails()
    check(len(mails) == 1, f"{len(mails)} mails")
    subject = subject_of(mails[0][0])
    print("comment: " + subject)
    check(shas["culprit"][:10] in subject and shas["comment"][:10] not in subject, f"subject: {subject}")
    return shas, show, subject


def test_comment(env):
    """Only the plausibility check stands between the planted runs and the mail (the engine's confirmation
    pairs are off, as when noise survives them): it must rule the comment-only commit out."""
    shas, show, _ = comment_scenario(env, "{confirm: false, revert: false, layout: false}")
    events = [e["message"] for e in show.get("events", [])]
    check(any("implausible" in e and shas["comment"][:10] in e and "only comments in work.h" in e for e in events),
          "no event says the comment-only commit is implausible")
    v = show.get("verification", {})
    check(v.get("culprit") == shas["culprit"] and v["numbers"]["plausibility"]["implausible"] is False,
          f"verification: {v}")


def test_comment_defaults(env):
    """With the default verification the engine's interleaved pairs already refute the planted runs, and the
    mail shows the real shift."""
    _, show, subject = comment_scenario(env, "{pairs: 5, revert: false, layout: false}")
    change = re.search(r"([-+][0-9.]+)% regression", subject)
    check(change and float(change.group(1)) < -10, f"the mail does not show the real (-16.7%) shift: {subject}")
    check("confirm" in show.get("verification", {}), f"no confirm summary: {show.get('verification')}")


if __name__ == "__main__":
    tests = {"layout": test_layout, "layout_broken": test_layout_broken,
             "revert_conflict": test_revert_conflict, "comment": test_comment, "comment_defaults": test_comment_defaults}
    parts = sys.argv[1:] or list(tests)
    code = 0
    for part in parts:
        code = max(code, run(f"verify-{part}", tests[part]))
    sys.exit(code)
