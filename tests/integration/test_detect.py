#!/usr/bin/env python3
"""Shift detection on a watched tree: the branch moves A -> B (comments only) -> C (one commit makes the
benchmark ~23% slower) -> D (comments only). Only the push to C may open a bisection, exactly one, over the
whole jump B..C, and only after interleaved confirmation runs; the pure-noise pushes open none."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import SOURCE, check, git, run, tested_is, wait_for  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE, "scripts", "lib"))
import make_demo_repo as demo  # noqa: E402

ROUNDS = 200
# Operations per second of CPU time, not of wall time: on a shared CI host the wall-clock rate swings by
# +-50% with the load of other jobs (measured), which no detector can tell from a shift; the CPU-time rate
# varies by ~1.5%, like a benchmark on a quiet lab machine.
BENCH_C = demo.BENCH_C.replace("CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID")
THRESHOLD = "10%"
# Every measured head is a detection row; these decisions open no bisection.
NO_BISECTION = ("baseline", "below_threshold", "rejected")


def make_pushes(dest):
    """Builds the history; returns the shas of the four branch states and of the planted commit."""
    os.makedirs(dest, exist_ok=True)
    demo.git(dest, "init", "-q", "-b", "master")
    demo.write(dest, "bench.c", BENCH_C)
    demo.write(dest, "Makefile", demo.MAKEFILE)
    demo.write(dest, "work.h", f"#define WORK_ROUNDS {ROUNDS}\n")
    demo.write(dest, "util.c", "int util_version(void) { return 0; }\n")
    demo.write(dest, "NOTES", "demo project\n")
    shas = {}
    n = [0]

    def note(text):
        with open(os.path.join(dest, "NOTES"), "a") as f:
            f.write(text + "\n")
        n[0] += 1
        return demo.commit(dest, n[0], f"notes: {text}")

    demo.commit(dest, 0, "demo: initial benchmark")
    for state, count in (("A", 2), ("B", 3)):
        for i in range(count):
            shas[state] = note(f"{state} note {i}")
    note("C note 0")
    demo.write(dest, "work.h", f"#define WORK_ROUNDS {ROUNDS * 130 // 100}\n")
    n[0] += 1
    shas["culprit"] = demo.commit(dest, n[0], "work: do more rounds per operation",
                                  "Signed-off-by: Rita Regress <rita@example.org>",
                                  author=("Rita Regress", "rita@example.org"))
    shas["C"] = note("C note 1")
    for i in range(3):
        shas["D"] = note(f"D note {i}")
    demo.git(dest, "update-ref", "refs/heads/master", shas["A"])
    return shas


def write_job(path, threshold=THRESHOLD):
    with open(path, "w") as f:
        f.write(f"""name: detect-throughput
build: {{recipe: command, command: [make, bench], artifacts: [bench], timeout: 120s}}
run: {{machine_group: local, command: [./bench, --seconds, "0.3"], runs: 3, timeout: 60s}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: {threshold},
          watch: [bench.elapsed_s]}}
verify: {{confirm: false, revert: false, layout: false}}
""")
    return path


class Db(harness.Db):
    def detections(self):
        return self.rows("SELECT id, good, bad, metric, state, bisection_id FROM detections ORDER BY id")


def push(repo, sha):
    git(repo, "update-ref", "refs/heads/master", sha)


def check_detections_cli(env, db, confirmed_id, bisection_id):
    """`bisectctl detections` shows every head comparison the watcher stored, with its decision and bisection."""
    shown = {d["id"]: d for d in env.ctl_json("detections", "--tree", "demo")["detections"]}
    stored = db.detections()
    check(sorted(shown) == sorted(d[0] for d in stored), f"detections shown {sorted(shown)} != stored {stored}")
    for id, good, bad, _, state, bisection in stored:
        d = shown[id]
        check((d["good"] or "", d["bad"], d["state"], d["bisection_id"]) == (good, bad, state, bisection or None),
              f"detection {id}: shown {d}, stored {(good, bad, state, bisection)}")
    decision = shown[confirmed_id]["decision"]
    check(decision.startswith("confirmed ") and decision.endswith(f": bisection {bisection_id}"),
          f"decision of the confirmed detection: {decision!r}")
    rejected = [d["decision"] for d in shown.values() if d["state"] == "rejected"]
    check(all(r.startswith("not confirmed ") and "p=" in r for r in rejected),
          f"decisions of the rejected detections: {rejected}")
    text = env.ctl("detections", "--tree", "demo").stdout
    check(f"bisection {bisection_id}" in text, f"bisectctl detections:\n{text}")
    check(env.ctl_json("detections", "--tree", "nope")["detections"] == [], "detections of an unknown tree")


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_pushes(repo)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_daemon()
    db = Db(os.path.join(env.data, "bisectd.db"))
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    wait_for(lambda: tested_is(env, db, shas["A"]), 120, "head A never became the baseline")

    push(repo, shas["B"])  # pure noise: comments only
    wait_for(lambda: tested_is(env, db, shas["B"]), 120, "head B was never measured and compared")
    check(env.ctl_json("bisections")["bisections"] == [], "the comment-only push B opened a bisection")
    check(all(d[4] in NO_BISECTION for d in db.detections()), f"push B: detections {db.detections()}")

    push(repo, shas["C"])  # the real slowdown
    wait_for(lambda: env.ctl_json("bisections")["bisections"], 180, "no bisection opened after the slowing push C")
    bisections = env.ctl_json("bisections")["bisections"]
    check(len(bisections) == 1, f"{len(bisections)} bisections opened by push C: {bisections}")
    b = bisections[0]
    check(b["origin"] == "detect", f"origin: {b}")
    check((b["good"], b["bad"]) == (shas["B"], shas["C"]), f"range {b['good'][:12]}..{b['bad'][:12]} is not the "
                                                          f"whole jump {shas['B'][:12]}..{shas['C'][:12]}")
    check(git(repo, "rev-list", f"{b['good']}..{b['bad']}").split().count(shas["culprit"]) == 1,
          "the bisection range does not contain the planted commit")
    confirmed = [d for d in db.detections() if d[4] == "confirmed"]
    check(len(confirmed) == 1 and confirmed[0][1:3] == (shas["B"], shas["C"]) and confirmed[0][5] == b["id"],
          f"detections: {db.detections()}")
    detection_id = confirmed[0][0]
    # The confirmation really ran: interleaved visits of both ends on one machine, >= 5 runs each, all done.
    runs = db.rows("SELECT r.commit_sha, COUNT(s.id), COUNT(DISTINCT s.machine), MIN(r.created_at) "
                   "FROM requests r JOIN samples s ON s.request_id = r.id "
                   "WHERE r.purpose = 'confirm' AND r.detection_id = ? GROUP BY r.commit_sha", detection_id)
    per_commit = {commit: count for commit, count, _, _ in runs}
    check(per_commit.get(shas["B"], 0) >= 5 and per_commit.get(shas["C"], 0) >= 5, f"confirmation runs: {runs}")
    check(all(machines == 1 for _, _, machines, _ in runs), f"confirmation ran on several machines: {runs}")
    first_bisect = db.rows("SELECT MIN(id) FROM requests WHERE purpose = 'bisect'")[0][0]
    last_confirm = db.rows("SELECT MAX(id) FROM requests WHERE purpose = 'confirm' AND detection_id = ?",
                           detection_id)[0][0]
    check(first_bisect is None or first_bisect > last_confirm, "bisect requests were queued before confirmation")
    events = " | ".join(e.get("message", "") for e in env.ctl_json("show", str(b["id"])).get("events", []))
    check(f"opened by detection {detection_id}" in events, f"events of bisection {b['id']}: {events}")

    push(repo, shas["D"])  # pure noise again
    wait_for(lambda: tested_is(env, db, shas["D"]), 180, "head D was never measured and compared")
    check(len(env.ctl_json("bisections")["bisections"]) == 1, "the comment-only push D opened a bisection")
    others = [d for d in db.detections() if d[0] != detection_id]
    check(all(d[4] in NO_BISECTION for d in others), f"noise pushes left detections: {others}")
    check_detections_cli(env, db, detection_id, b["id"])
    print(f"detections: {db.detections()}; confirmation samples per commit: {per_commit}")
    with open(env.log_path) as f:
        print("".join(line for line in f if " vs " in line or "detection " in line), end="")


def make_ramp(dest, before, ramp, after):
    """A history whose every commit is one push: `before` comment-only heads, `ramp` heads that each add 4%
    more work per operation (each below the 5% threshold alone), then `after` comment-only heads."""
    os.makedirs(dest, exist_ok=True)
    demo.git(dest, "init", "-q", "-b", "master")
    for name, text in (("bench.c", BENCH_C), ("Makefile", demo.MAKEFILE), ("util.c", "int util_version(void) { return 0; }\n"),
                       ("NOTES", "demo\n"), ("work.h", f"#define WORK_ROUNDS {ROUNDS}\n")):
        demo.write(dest, name, text)
    heads = [demo.commit(dest, 0, "demo: initial benchmark")]
    for i in range(1, before + ramp + after):
        if before <= i < before + ramp:
            rounds = ROUNDS * (1000 + 40 * (i - before + 1)) // 1000
            demo.write(dest, "work.h", f"#define WORK_ROUNDS {rounds}\n")
            heads.append(demo.commit(dest, i, f"work: {rounds} rounds"))
        else:
            with open(os.path.join(dest, "NOTES"), "a") as f:
                f.write(f"note {i}\n")
            heads.append(demo.commit(dest, i, f"notes: note {i}"))
    demo.git(dest, "update-ref", "refs/heads/master", heads[0])
    return heads


def test_series(env):
    """A slowdown spread over three pushes, each below the threshold: only the series detector sees it."""
    repo = os.path.join(env.dir, "ramp")
    before, ramp, after = 9, 3, 9
    heads = make_ramp(repo, before, ramp, after)
    job = write_job(os.path.join(env.dir, "job.yaml"), threshold="5%")
    env.start_daemon()
    db = Db(os.path.join(env.data, "bisectd.db"))
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    for sha in heads:
        push(repo, sha)
        wait_for(lambda: tested_is(env, db, sha), 120, f"head {sha[:12]} was never measured and compared")
    wait_for(lambda: env.ctl_json("bisections")["bisections"], 120, "the series detector opened no bisection")
    bisections = env.ctl_json("bisections")["bisections"]
    check(len(bisections) == 1, f"{len(bisections)} bisections: {bisections}")
    b = bisections[0]
    inside = git(repo, "rev-list", f"{b['good']}..{b['bad']}").split()
    check(all(h in inside for h in heads[before:before + ramp]), f"range {b['good'][:12]}..{b['bad'][:12]} "
          f"misses part of the ramp {[h[:12] for h in heads[before:before + ramp]]}")
    confirmed = [d for d in db.detections() if d[4] == "confirmed"]
    check(len(confirmed) == 1 and confirmed[0][5] == b["id"], f"detections: {db.detections()}")
    with open(env.log_path) as f:
        print("".join(line for line in f if "series" in line or "detection " in line), end="")


if __name__ == "__main__":
    if "--series" in sys.argv:
        sys.exit(run("detect-series", test_series))
    sys.exit(run("detect", test))
