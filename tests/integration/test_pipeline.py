#!/usr/bin/env python3
"""End to end: register a tree, the watcher measures its head, a push brings a regression, the shift is
confirmed, bisected to the planted commit, and the report arrives once at a real SMTP server."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, git, make_repo, run, wait_for, write_job  # noqa: E402


def check_prebuild_reused(env, show):
    """While a round waited for its run, a likely next pick was prebuilt; every prebuilt commit the bisection
    tested afterwards reused that build: the daemon logged a build of it once (the prebuild's)."""
    events = [e["message"] for e in show["events"]]
    with open(env.log_path) as f:
        log = f.read()
    prebuilt = []
    for i, message in enumerate(events):
        words = message.split()
        if words[0] == "prebuild" and ": built in" in message:
            sha = words[1].rstrip(":")
            prebuilt.append(sha)
            if any(m.startswith(f"test {sha} ") for m in events[i + 1:]):
                check(log.count(f"build demo {sha} ") == 1, f"prebuilt {sha} was built again when tested")
                print(f"prebuilt {sha} tested later with its build reused")
    check(prebuilt, "no commit was prebuilt while a round waited; events:\n" + "\n".join(events))


def check_report_agrees(env, repo, shas, bisection_id, subject, report):
    """The report compares the culprit with its real parent (naming the commit whose binary the parent shares),
    gives one shift number in the subject, the table, its shift line and `bisectctl show`, counts no boots on the
    local backend, names this host's CPU and the compiler, and has no tags (none configured)."""
    bid = str(bisection_id)
    show = env.ctl_json("show", bid)
    parent = git(repo, "rev-parse", shas["culprit"] + "^")
    compared = show.get("compared") or {}
    check((compared.get("parent") or {}).get("commit") == parent, f"show's parent is not the real one: {compared}")
    check(f"commit:\n  {parent[:10]} (" in report, "the report's comparison does not start with the real parent")
    same = compared.get("same_binary_as")
    if same:
        check(f"(same binary as {same['commit'][:10]} " in report, "the shared binary is not named")
        print(f"pipeline: parent {parent[:10]} measured as {same['commit'][:10]} ({same['subject']})")
    shift = "%+.1f%%" % (100 * show["shift"]["estimate"])
    check(f" {shift} regression" in subject, f"subject {subject!r} does not give the shift {shift}")
    check(f"  shift: {shift} (95% interval " in report, f"the shift line does not give {shift}")
    row = re.search(r"\n( *[0-9.]+[^\n]*  bench\.ops_per_sec)\n", report)
    check(row and f" {shift} " in row.group(1), f"the table's %change is not {shift}: {row and row.group(1)}")
    shown = env.ctl("show", bid).stdout
    check(re.search(r"^shift +" + re.escape(shift) + r" \(95% interval", shown, re.M), f"show:\n{shown}")
    check(re.search(r"^parent +" + parent, shown, re.M), f"show has no parent line:\n{shown}")
    check("boots" not in report, "boots counted on the local backend")
    check(re.search(r"^test machine: \d+ threads? \d+ sockets? .+ with \d+[GM] memory$", report, re.M),
          "the test machine is not this host's CPU and memory")
    check(re.search(r"^compiler/[^\n]*:\n  gcc-\d+/", report, re.M), "no compiler on the axis line")
    check("Reported-by" not in report and "Closes:" not in report, "tags without a configured list")


def check_repeat_not_mailed(env, shas, first_id):
    """A second bisection of the same range finds the same culprit: its report answers the first mail and is
    not mailed (one mail per culprit per tree and job)."""
    second = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["split"], "--bad", shas["head"]).stdout
    second = second.strip()
    r = env.ctl("wait", second, "--timeout", "600", expect=None)
    check(r.returncode == 0, f"second bisection: exit {r.returncode}: {r.stderr[-500:]}")
    check(env.ctl_json("show", second)["culprit"] == shas["culprit"], "the second bisection found another culprit")
    first = env.ctl_json("report", str(first_id))
    again = env.ctl_json("report", second)
    check(again["repeat_of"] == first_id and again["sent"] is False, f"repeat: {again['repeat_of']}, {again['sent']}")
    check(again["subject"] == "Re: " + first["subject"], f"repeat subject: {again['subject']}")
    check(again["in_reply_to"] == first["message_id"], f"repeat In-Reply-To: {again['in_reply_to']}")
    time.sleep(3)  # several daemon ticks: a queued repeat would be delivered by now
    check(len(env.mails()) == 1, f"{len(env.mails())} mails arrived for one culprit")


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--split-at", "8")
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_smtp()
    env.start_daemon()
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job, "--notify", "Watcher <watch@example.org>",
            "--public")  # the culprit's author is mailed too
    trees = env.ctl_json("tree", "list")
    check(trees["trees"][0]["name"] == "demo", f"tree list: {trees}")

    # The first head becomes the baseline once measured.
    wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 300, "the baseline head was never measured")
    check(env.ctl_json("bisections")["bisections"] == [], "a bisection opened without a push")

    git(repo, "update-ref", "refs/heads/master", shas["head"])  # the push
    wait_for(lambda: env.ctl_json("bisections")["bisections"], 600, "no bisection opened after the regressing push")
    bisection = env.ctl_json("bisections")["bisections"][0]
    check(bisection["origin"] == "detect", f"origin: {bisection}")
    check(bisection["good"] == shas["split"] and bisection["bad"] == shas["head"], f"range: {bisection}")

    r = env.ctl("wait", str(bisection["id"]), "--timeout", "900", expect=None)
    show = env.ctl_json("show", str(bisection["id"]))
    check(r.returncode == 0, f"wait: exit {r.returncode}: {r.stderr[-500:]}\nshow: {show}")
    check(show["state"] == "found", f"state: {show['state']}")
    check(show["culprit"] == shas["culprit"], f"culprit {show['culprit']} != planted {shas['culprit']}")
    check(show["runs"] > 0 and show["builds"] > 0, f"runs/builds: {show}")
    # Most commits only add notes: their bench binary equals a neighbour's, so they share its samples.
    events = [e["message"] for e in show.get("events", [])]
    identical = [e for e in events if "builds identical to" in e]
    print("pipeline: " + ("\n  ".join(identical) or "no identical builds"))
    check(identical, f"no commit was found to build identically to its neighbour: {events}")
    check_prebuild_reused(env, show)

    wait_for(lambda: len(env.mails()) >= 1, 120, "no mail arrived at the SMTP server")
    mails = env.mails()
    check(len(mails) == 1, f"{len(mails)} mails arrived, expected exactly one")
    text, recipients = mails[0]
    check(shas["culprit"][:10] in text.split("\n\n", 1)[0], "the subject does not name the culprit")
    check(shas["culprit"] in text, "the body does not name the culprit's full sha")
    check("watch@example.org" in recipients, f"notify address missing: {recipients}")
    check("rita@example.org" in recipients, f"the culprit's author is not a recipient: {recipients}")
    report = env.ctl("report", str(bisection["id"])).stdout
    check(shas["culprit"] in report, "bisectctl report does not name the culprit")
    mail = env.ctl_json("report", str(bisection["id"]))
    check_report_agrees(env, repo, shas, bisection["id"], mail["subject"], mail["body"].replace("\r\n", "\n"))
    check_repeat_not_mailed(env, shas, bisection["id"])


if __name__ == "__main__":
    sys.exit(run("pipeline", test))
