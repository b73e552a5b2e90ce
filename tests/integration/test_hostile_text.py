#!/usr/bin/env python3
"""Text a watched tree controls, on its way to a terminal or into the store (issue 29, the low findings):
- a commit subject and a build log carrying terminal escapes (set the title, clear the screen): `bisectctl show`
  and `bisectctl logs build` print them visibly escaped, never raw; `show --json` stays exact JSON;
- a notify entry with CR/LF sent to the API (tree add, tree set): refused with the one-line error naming the
  field, nothing stored; bisectctl refuses it for `tree set` too;
- a job file with a key given twice: refused at `tree add` with file:line naming the key."""
import json
import os
import sqlite3
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, git, make_repo, run, wait_for, write_job  # noqa: E402

PWNED = "\x1b]0;pwned\x07\x1b[2J"            # OSC 0 (window title) then CSI 2J (clear screen)
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J"          # as bisectctl prints it
SUBJECT = PWNED + "mm: a subject that retitles your terminal"


def hostile_commit(repo):
    """Commits on master a change whose subject carries the escapes and whose build prints them."""
    with open(os.path.join(repo, "Makefile"), "a") as f:
        f.write("\t@printf '\\033]0;pwned\\007\\033[2J(from the build)\\n'\n")
    with open(os.path.join(repo, "bench.c"), "a") as f:
        f.write("/* rebuilt: the recipe prints the escapes */\n")
    git(repo, "commit", "-q", "-a", "-m", SUBJECT)
    return git(repo, "rev-parse", "HEAD")


def no_raw_escapes(text, what):
    check("\x1b" not in text and "\x07" not in text, f"{what} printed raw escapes: {text[:2000]!r}")


class Api:
    def __init__(self, env):
        self.env = env
        with open(os.path.join(env.data, "token")) as f:
            self.token = f.read().strip()

    def post(self, path, body):
        req = urllib.request.Request(self.env.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())


def refused(status, body, *needles):
    check(status == 400, f"HTTP {status}, expected 400: {body}")
    message = body.get("error", "")
    check(message and "\n" not in message and "\r" not in message, f"not a one-line error: {body!r}")
    for n in needles:
        check(n in message, f"error {message!r} does not mention {n!r}")
    return message


def check_terminal_output(env, repo, head):
    wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 300, "the head was never measured")
    db = os.path.join(env.data, "bisectd.db")
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as c:
        request = c.execute("SELECT MIN(id) FROM requests WHERE commit_sha = ?", (head,)).fetchone()[0]
    logs = env.ctl("logs", "build", str(request))
    no_raw_escapes(logs.stdout, "logs build")
    check(SHOWN + "(from the build)\n" in logs.stdout, f"logs build does not show the escapes: {logs.stdout!r}")

    out = env.ctl("bisect", "start", "--tree", "demo", "--good", git(repo, "rev-parse", "HEAD~1"), "--bad", head,
                  "--json").stdout
    bid = str(json.loads(out)["id"])
    env.ctl("wait", bid, "--timeout", "300", expect=None)
    show = env.ctl("show", bid)
    no_raw_escapes(show.stdout + show.stderr, "show")
    check(SHOWN + "mm: a subject" in show.stdout, f"show does not list the subject escaped: {show.stdout}")
    raw = env.ctl("show", bid, "--json").stdout
    no_raw_escapes(raw, "show --json")
    subjects = [t.get("subject") for t in json.loads(raw).get("tested", [])]
    check(SUBJECT in subjects, f"--json does not carry the exact subject: {subjects}")
    print("show, logs: escapes shown as", SHOWN)


def check_notify(env, api, repo, job):
    crlf = "dev@example.org\r\nBcc: victim@evil.example"
    before = env.ctl_json("tree", "show", "demo")["tree"]["notify"]
    message = refused(*api.post("/api/v1/trees/demo", {"notify": [crlf]}), "notify:", "not a mail address")
    refused(*api.post("/api/v1/trees/demo", {"mail_cc": ["cc@example.org\nX-Evil: 1"]}), "mail_cc:")
    after = env.ctl_json("tree", "show", "demo")["tree"]["notify"]
    check(after == before, f"tree set stored a notify entry: {after}")
    tree = {"name": "other", "url": repo, "branches": ["master"], "job_yaml": open(job).read(), "notify": [crlf]}
    refused(*api.post("/api/v1/trees", tree), "notify:")
    names = [t["name"] for t in env.ctl_json("tree", "list")["trees"]]
    check(names == ["demo"], f"tree add with a CR/LF notify stored a tree: {names}")
    r = env.ctl("tree", "set", "demo", "--notify", crlf, expect=2)
    check("--notify" in r.stderr and r.stderr.count("\n") == 1, f"bisectctl tree set: {r.stderr!r}")
    print("notify with CR/LF refused:", message)


def check_duplicate_key(env, repo):
    path = os.path.join(env.dir, "dup.yaml")
    text = open(write_job(path, name="dup-job")).read()
    with open(path, "w") as f:
        f.write(text + "name: other-job\n")
    r = env.ctl("tree", "add", "dup", repo, "--branch", "master", "--job", path, expect=1)
    check("dup.yaml:6: name: duplicate key (first at line 1)" in r.stderr, f"duplicate key: {r.stderr!r}")
    names = [t["name"] for t in env.ctl_json("tree", "list")["trees"]]
    check(names == ["demo"], f"a job with a duplicate key stored a tree: {names}")
    print("duplicate key:", r.stderr.strip())


def test(env):
    repo = os.path.join(env.dir, "repo")
    make_repo(repo, "--commits", "4")
    head = hostile_commit(repo)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_daemon()
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    api = Api(env)
    failed = []
    for name, case in (("notify", lambda: check_notify(env, api, repo, job)),
                       ("duplicate key", lambda: check_duplicate_key(env, repo)),
                       ("terminal output", lambda: check_terminal_output(env, repo, head))):
        try:
            case()
        except Exception as e:  # noqa: BLE001 - every case runs; the failures are listed together
            failed.append(f"{name}: {e}")
    check(not failed, f"{len(failed)} of 3 cases failed:\n" + "\n".join(failed))
    check(env.ctl_json("status")["version"], "the daemon stopped answering")


if __name__ == "__main__":
    sys.exit(run("hostile_text", test))
