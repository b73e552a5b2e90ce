#!/usr/bin/env python3
"""A job's env may not carry loader variables (LD_PRELOAD, GCONV_PATH, ...): `tree add` and `tree set` refuse the job
with one line naming file:line and the key, nothing is stored, and the daemon keeps running."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, make_repo, one_line_error, run, write_job  # noqa: E402

HOSTILE_JOB = """name: hostile-env
build:
  recipe: command
  command: [make, bench]
  artifacts: [bench]
  env:
    LD_PRELOAD: /tmp/libmarker.so
run: {machine_group: local, command: [./bench, --seconds, "0.3"], runs: 3, timeout: 60s}
metrics: {parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}
"""


def test(env):
    repo = os.path.join(env.dir, "repo")
    make_repo(repo, "--commits", "3")
    hostile = os.path.join(env.dir, "hostile.yaml")
    with open(hostile, "w") as f:
        f.write(HOSTILE_JOB)
    env.start_daemon()

    one_line_error(env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", hostile, expect=1),
                   "hostile.yaml:7:", "LD_PRELOAD")
    check(env.ctl_json("tree", "list")["trees"] == [], "a tree was stored from a job with LD_PRELOAD")

    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", write_job(os.path.join(env.dir, "job.yaml")))
    def settings():  # what tree set may change (the watcher's own fields move on every poll)
        keys = ("name", "job", "notify", "mail_cc", "private", "poll_interval_s", "branches", "url")
        return [{k: t.get(k) for k in keys} for t in env.ctl_json("tree", "list")["trees"]]
    before = settings()
    one_line_error(env.ctl("tree", "set", "demo", "--job", hostile, expect=1), "hostile.yaml:7:", "LD_PRELOAD")
    after = settings()
    check(after == before, f"tree set stored part of a job with LD_PRELOAD: {json.dumps(after)[:500]}")
    check("LD_PRELOAD" not in json.dumps(after), "LD_PRELOAD reached the stored tree")
    check(env.ctl_json("status")["version"], "the daemon stopped answering")


if __name__ == "__main__":
    sys.exit(run("hostile_env", test))
