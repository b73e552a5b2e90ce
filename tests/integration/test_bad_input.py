#!/usr/bin/env python3
"""Bad input gets a one-line error naming the field or file:line, nothing is stored, the daemon keeps running."""
import json
import os
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, make_repo, one_line_error, run, write_job  # noqa: E402


def post(env, path, body, token=True):
    headers = {"Content-Type": "application/json"}
    if token:
        with open(os.path.join(env.data, "token")) as f:
            headers["Authorization"] = "Bearer " + f.read().strip()
    req = urllib.request.Request(env.url + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--commits", "6")
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_daemon()

    one_line_error(env.ctl("tree", "add", "Bad Name", repo, "--branch", "master", "--job", job, expect=2), "Bad Name")
    one_line_error(env.ctl("tree", "add", "demo", repo + ";rm -rf /", "--branch", "master", "--job", job, expect=2))
    one_line_error(env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", "/nonexistent.yaml", expect=1),
                   "/nonexistent.yaml")
    bad_key = os.path.join(env.dir, "job.yaml")
    with open(bad_key, "a") as f:
        f.write("colour: blue\n")
    one_line_error(env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", bad_key, expect=1),
                   "job.yaml:6:", "colour")
    broken = os.path.join(env.dir, "broken.yaml")
    with open(broken, "w") as f:
        f.write("name: x\nbuild: [unclosed\n")
    one_line_error(env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", broken, expect=1), "broken.yaml:")
    one_line_error(env.ctl("tree", "add", "demo", repo, "--branch", "nope", "--job", write_job(job), expect=1), "nope")

    status, body = post(env, "/api/v1/trees", {"name": "x", "url": "$(reboot)", "branches": ["master"],
                                               "job_yaml": open(job).read()})
    check(status == 400 and body["error"].startswith("url:"), f"hostile URL: {status} {body}")
    status, body = post(env, "/api/v1/trees", {"name": "x"}, token=False)
    check(status == 401, f"write without a token: {status} {body}")
    check(env.ctl_json("tree", "list")["trees"] == [], "something was stored from bad input")

    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    one_line_error(env.ctl("bisect", "start", "--tree", "demo", "--good", "v9.99", "--bad", shas["head"], expect=1),
                   "v9.99")
    one_line_error(env.ctl("bisect", "start", "--tree", "nosuch", "--good", "a", "--bad", "b", expect=1), "nosuch")
    check(env.ctl_json("bisections")["bisections"] == [], "a bisection was stored from bad input")
    check(env.ctl_json("status")["version"], "the daemon stopped answering")


if __name__ == "__main__":
    sys.exit(run("bad_input", test))
