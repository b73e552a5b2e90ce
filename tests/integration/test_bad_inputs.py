#!/usr/bin/env python3
"""The bad-input catalogue of docs/reliability.md, case by case against the real programs: each bad input to the
API, bisectctl, a job file, the daemon's config and lab files and its command line gets its one-line error (naming
the field or file:line), nothing is stored, and the daemon keeps answering. Every case id must have its row in
docs/reliability.md's catalogue, and every row there a case here."""
import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, SOURCE, check, make_repo, run, write_job  # noqa: E402


class Api:
    def __init__(self, env):
        self.env = env
        with open(os.path.join(env.data, "token")) as f:
            self.token = f.read().strip()

    def call(self, method, path, body=None, raw=None, token=True, headers=None):
        h = {"Content-Type": "application/json", **(headers or {})}
        if token:
            h["Authorization"] = "Bearer " + (self.token if token is True else token)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.env.url + path, data=data, headers=h, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def status_line_for_headers(self, head):
        """Sends only a request head (no body) and returns the status line the server answers with."""
        with socket.create_connection(("127.0.0.1", self.env.port), timeout=30) as s:
            s.sendall(head.encode())
            return s.recv(4096).decode(errors="replace").split("\r\n", 1)[0]


def api_error(status, body, code, *needles):
    check(status == code, f"HTTP {status}, expected {code}: {body}")
    message = body.get("error", "")
    check(message and "\n" not in message, f"not a one-line error: {body}")
    for n in needles:
        check(n in message, f"error {message!r} does not mention {n!r}")
    return message


def ctl_error(env, args, code, *needles):
    r = env.ctl(*args, expect=code)
    err = r.stderr.strip()
    check(err.count("\n") == 0 and err.startswith("bisectctl: error:"), f"not a one-line error: {err!r}")
    for n in needles:
        check(n in err, f"error {err!r} does not mention {n!r}")
    return err


def daemon_error(env, args, *needles, files=None):
    """bisectd refuses to start: a non-zero exit and exactly one error line naming every needle."""
    for name, text in (files or {}).items():
        with open(os.path.join(env.dir, name), "w") as f:
            f.write(text)
    data = os.path.join(env.dir, "refused-data")
    listen = [] if "--listen" in args else ["--listen", "127.0.0.1:0"]
    r = subprocess.run([os.path.join(BIN, "bisectd"), "--data-dir", data, *listen, *args],
                       capture_output=True, text=True, timeout=60, cwd=env.dir)
    errors = [line for line in r.stderr.splitlines() if "[error]" in line]
    check(r.returncode != 0, f"bisectd {' '.join(args)} started: {r.stderr}")
    check(len(errors) == 1, f"not one error line: {r.stderr}")
    for n in needles:
        check(n in errors[0], f"error {errors[0]!r} does not mention {n!r}")
    return errors[0].split("[error] ", 1)[1]


def job_variant(env, name, old, new):
    """The test job with one line changed, for the job-file cases (errors name this file's path and line)."""
    path = os.path.join(env.dir, name)
    text = open(write_job(path)).read()
    check(old in text, f"{old!r} is not in the test job")
    with open(path, "w") as f:
        f.write(text.replace(old, new))
    return path


def cases(env, api, repo, job, shas):
    jy = open(job).read()
    tree = {"name": "x", "url": repo, "branches": ["master"], "job_yaml": jy}

    def tree_add(path, *needles):
        return ctl_error(env, ("tree", "add", "demo2", repo, "--branch", "master", "--job", path), 1,
                         os.path.basename(path) + ":", *needles)

    def lab(text, *needles):
        return daemon_error(env, ["--lab", "lab.yaml"], "lab.yaml:", *needles, files={"lab.yaml": text})

    def config(text, *needles):
        return daemon_error(env, ["--config", "c.yaml"], "c.yaml:", *needles, files={"c.yaml": text})

    machine = "machines:\n  - name: m1\n    backend: local\n"
    return {
        # --- HTTP API -----------------------------------------------------------------------------------------
        "api-no-token": lambda: api_error(*api.call("POST", "/api/v1/trees", tree, token=False), 401, "token"),
        "api-wrong-token": lambda: api_error(*api.call("POST", "/api/v1/trees", tree, token="0" * 64), 401, "token"),
        "api-not-json": lambda: api_error(*api.call("POST", "/api/v1/trees", raw=b"{name: x"), 400, "JSON object"),
        "api-json-array": lambda: api_error(*api.call("POST", "/api/v1/trees", raw=b"[1, 2]"), 400, "JSON object"),
        "api-name-type": lambda: api_error(*api.call("POST", "/api/v1/trees", {**tree, "name": 5}), 400,
                                           "name: must be a string"),
        "api-branches-type": lambda: api_error(*api.call("POST", "/api/v1/trees", {**tree, "branches": "master"}),
                                               400, "branches:"),
        "api-job-type": lambda: api_error(*api.call("POST", "/api/v1/trees", {**tree, "job_yaml": 7}), 400,
                                          "job_yaml:"),
        "api-job-unknown-key": lambda: api_error(
            *api.call("POST", "/api/v1/trees", {**tree, "job_yaml": jy + "colour: blue\n"}), 400, "colour",
            "unknown key"),
        "api-tree-name": lambda: api_error(*api.call("POST", "/api/v1/trees", {**tree, "name": "Bad Name"}), 400,
                                           "name:", "Bad Name"),
        "api-hostile-url": lambda: api_error(*api.call("POST", "/api/v1/trees", {**tree, "url": "$(reboot)"}), 400,
                                             "url:"),
        "api-unknown-endpoint": lambda: api_error(*api.call("GET", "/api/v1/nosuch"), 404, "/api/v1/nosuch"),
        "api-unknown-bisection": lambda: api_error(*api.call("GET", "/api/v1/bisections/999999"), 404, "999999"),
        "api-id-not-number": lambda: api_error(*api.call("GET", "/api/v1/bisections/abc"), 400, "'abc'"),
        "api-bisect-unknown-tree": lambda: api_error(
            *api.call("POST", "/api/v1/bisections", {"tree": "nosuch", "good": "a", "bad": "b"}), 404, "nosuch"),
        "api-bisect-tree-type": lambda: api_error(
            *api.call("POST", "/api/v1/bisections", {"tree": 3, "good": "a", "bad": "b"}), 400, "tree:"),
        "api-remove-unknown-tree": lambda: api_error(*api.call("DELETE", "/api/v1/trees/nosuch"), 404, "nosuch"),
        "api-release-unknown-machine": lambda: api_error(*api.call("POST", "/api/v1/machines/nosuch/release"), 404,
                                                         "nosuch"),
        "api-foreign-host": lambda: api_error(
            *api.call("GET", "/api/v1/status", headers={"Host": "evil.example"}), 421, "Host"),
        "api-body-too-large": lambda: check(
            " 413 " in api.status_line_for_headers(
                f"POST /api/v1/trees HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {api.token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {64 << 20}\r\n\r\n"),
            "a 64 MiB body was not refused from its header"),
        # --- bisectctl ------------------------------------------------------------------------------------------
        "cli-tree-name": lambda: ctl_error(env, ("tree", "add", "Bad Name", repo, "--branch", "master", "--job",
                                                 job), 2, "Bad Name"),
        "cli-hostile-url": lambda: ctl_error(env, ("tree", "add", "demo2", repo + ";rm -rf /", "--branch", "master",
                                                   "--job", job), 2),
        "cli-missing-job-file": lambda: ctl_error(env, ("tree", "add", "demo2", repo, "--branch", "master", "--job",
                                                        "/nonexistent.yaml"), 1, "/nonexistent.yaml"),
        "cli-unknown-branch": lambda: ctl_error(env, ("tree", "add", "demo2", repo, "--branch", "nope", "--job",
                                                      job), 1, "nope"),
        "cli-unknown-ref": lambda: ctl_error(env, ("bisect", "start", "--tree", "demo", "--good", "v9.99", "--bad",
                                                   shas["head"]), 1, "v9.99"),
        "cli-unknown-tree": lambda: ctl_error(env, ("bisect", "start", "--tree", "nosuch", "--good", "a", "--bad",
                                                    "b"), 1, "nosuch"),
        "cli-show-not-number": lambda: ctl_error(env, ("show", "abc"), 2, "abc"),
        "cli-unknown-command": lambda: ctl_error(env, ("frobnicate",), 2, "frobnicate"),
        "cli-no-daemon": lambda: ctl_error(env, ("--server", "http://127.0.0.1:1", "status"), 1, "127.0.0.1:1"),
        # --- job files (through bisectctl tree add) ------------------------------------------------------------
        "job-yaml-syntax": lambda: tree_add(job_variant(env, "j1.yaml", "params: {nr_threads: 1}", "params: [1"),
                                            "YAML"),
        "job-unknown-key": lambda: tree_add(job_variant(env, "j2.yaml", "params:", "colour: blue\nparams:"),
                                            "colour"),
        "job-runs-zero": lambda: tree_add(job_variant(env, "j3.yaml", "runs: 3", "runs: 0"), "runs"),
        "job-runs-type": lambda: tree_add(job_variant(env, "j4.yaml", "runs: 3", "runs: many"), "runs", "many"),
        "job-threshold": lambda: tree_add(job_variant(env, "j5.yaml", "threshold: 5%", "threshold: lots"),
                                          "threshold", "lots"),
        "job-direction": lambda: tree_add(job_variant(env, "j6.yaml", "direction: higher_is_better",
                                                      "direction: sideways"), "direction", "sideways"),
        "job-timeout": lambda: tree_add(job_variant(env, "j7.yaml", "timeout: 120s", "timeout: 5x"), "timeout",
                                        "5x"),
        "job-recipe": lambda: tree_add(job_variant(env, "j8.yaml", "recipe: command", "recipe: teleport"), "recipe",
                                       "teleport"),
        "job-no-primary": lambda: tree_add(job_variant(env, "j9.yaml", "primary: bench.ops_per_sec, ", ""),
                                           "primary"),
        # --- the daemon's config file ---------------------------------------------------------------------------
        "config-unknown-key": lambda: config("colour: 1\n", "colour", "unknown key"),
        "config-duration": lambda: config("poll_interval: 5x\n", "poll_interval", "5x"),
        "config-transport": lambda: config("mail: {transport: pigeon}\n", "mail.transport", "pigeon"),
        "config-sandbox": lambda: config("sandbox: maybe\n", "sandbox", "maybe"),
        "config-range": lambda: config("confirm_runs: -3\n", "confirm_runs", "-3"),
        "config-yaml-syntax": lambda: config("mail: [1, 2\n", "YAML"),
        "config-missing-file": lambda: daemon_error(env, ["--config", "nonexistent.yaml"], "nonexistent.yaml"),
        # --- lab files ------------------------------------------------------------------------------------------
        "lab-unknown-backend": lambda: lab(machine.replace("local", "teleport"), "backend", "teleport"),
        "lab-duplicate-name": lambda: lab(machine + machine.replace("machines:\n", ""), "machines[1].name", "m1"),
        "lab-ssh-known-hosts": lambda: lab("machines:\n  - name: b\n    backend: ssh\n    settings: {host: 127.0.0.1,"
                                           " user: root}\n", "machines[0].settings.known_hosts", "missing"),
        "lab-qemu-network": lambda: lab("machines:\n  - name: q\n    backend: qemu\n    settings: {network: bridge}\n",
                                        "network", "bridge"),
        "lab-not-a-list": lambda: lab("machines: 3\n", "machines"),
        "lab-machine-name": lambda: lab(machine.replace("m1", "Box One"), "name", "Box One"),
        # --- the daemon's command line --------------------------------------------------------------------------
        "args-duration": lambda: daemon_error(env, ["--poll-interval", "5x"], "--poll-interval", "5x"),
        "args-listen": lambda: daemon_error(env, ["--listen", "0.0.0.0:99999"], "listen", "99999"),
    }


def catalogue_ids():
    """The case ids of docs/reliability.md's bad-input table (its first column, in backquotes)."""
    text = open(os.path.join(SOURCE, "docs", "reliability.md")).read()
    section = text.split("## Bad inputs", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z0-9-]+)` \|", section, re.M)


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--commits", "6")
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_daemon()
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    api = Api(env)

    table = cases(env, api, repo, job, shas)
    failed = []
    for name, case in table.items():
        try:
            message = case()
            print(f"{name}: {message}" if isinstance(message, str) else f"{name}: ok")
        except Exception as e:  # noqa: BLE001 - every case runs; the failures are listed together
            failed.append(f"{name}: {e}")
    check(not failed, f"{len(failed)} of {len(table)} cases failed:\n" + "\n".join(failed))
    documented = catalogue_ids()
    check(len(table) >= 40, f"only {len(table)} cases")
    check(sorted(documented) == sorted(table), "docs/reliability.md's catalogue and the cases differ: "
          f"only documented {sorted(set(documented) - set(table))}, only tested {sorted(set(table) - set(documented))}")

    trees = [t["name"] for t in env.ctl_json("tree", "list")["trees"]]
    check(trees == ["demo"], f"bad input stored a tree: {trees}")
    check(env.ctl_json("bisections")["bisections"] == [], "bad input stored a bisection")
    check(env.ctl_json("status")["version"], "the daemon stopped answering")
    print(f"{len(table)} bad inputs, each refused with its one-line error")


if __name__ == "__main__":
    sys.exit(run("bad_inputs", test))
