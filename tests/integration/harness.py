"""Shared helpers for the integration tests: real bisectd and bisectctl processes, a generated git tree,
a real SMTP server. Every test gets its own temp dir (kept on failure) and free loopback ports."""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("BISECTD_BIN_DIR", os.path.join(SOURCE, "build", "bin"))
SKIP = 125
# Debian's python3 has python3-aiosmtpd; another python3 first in PATH (pyenv, venv) may not.
SMTP_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Env:
    """A temp dir with a daemon, an SMTP sink and a bisectctl wrapper."""

    def __init__(self, name):
        self.dir = tempfile.mkdtemp(prefix=f"bisectd-it-{name}-")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.daemon = None
        self.smtp = None
        self.smtp_port = None
        self.mail_dir = os.path.join(self.dir, "mail")
        self.log_path = os.path.join(self.dir, "bisectd.log")
        self.ok = False

    # --- processes -------------------------------------------------------------------------------
    def start_smtp(self, port=None):
        """Starts the SMTP sink on `port` (a fresh one if None: a test may give the daemon a port before the sink
        runs there, to have deliveries fail first)."""
        self.smtp_port = port or free_port()
        self.smtp = subprocess.Popen([SMTP_PYTHON, os.path.join(HERE, "smtp_sink.py"), str(self.smtp_port),
                                      self.mail_dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: os.path.exists(os.path.join(self.mail_dir, "ready")), 20, "SMTP sink did not start")

    def stop_smtp(self):
        if self.smtp:
            self.smtp.terminate()
            self.smtp.wait(10)
            if os.path.exists(os.path.join(self.mail_dir, "ready")):
                os.remove(os.path.join(self.mail_dir, "ready"))
            self.smtp = None

    def start_daemon(self, *extra, cwd=None):
        args = [os.path.join(BIN, "bisectd"), "--data-dir", self.data, "--listen", f"127.0.0.1:{self.port}",
                "--poll-interval", "1", *extra]
        if self.smtp_port:
            args += ["--mail", f"smtp://127.0.0.1:{self.smtp_port}"]
        log = open(self.log_path, "a")
        self.daemon = subprocess.Popen(args, stdout=log, stderr=log, cwd=cwd)
        wait_for(self.daemon_up, 30, "bisectd did not answer on " + self.url)

    def daemon_up(self):
        check(self.daemon.poll() is None, f"bisectd exited with {self.daemon.returncode}; log: {self.log_tail()}")
        try:
            with urllib.request.urlopen(self.url + "/api/v1/status", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def kill_daemon(self, sig=signal.SIGKILL):
        self.daemon.send_signal(sig)
        code = self.daemon.wait(60)
        self.daemon = None
        return code

    def log_tail(self, n=40):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    # --- bisectctl ---------------------------------------------------------------------------------
    def ctl(self, *args, expect=0, timeout=300):
        env = dict(os.environ, BISECTD_URL=self.url, BISECTD_TOKEN_FILE=os.path.join(self.data, "token"))
        r = subprocess.run([os.path.join(BIN, "bisectctl"), *args], env=env, capture_output=True, text=True,
                           timeout=timeout)
        if expect is not None:
            check(r.returncode == expect, f"bisectctl {' '.join(args)}: exit {r.returncode}, expected {expect}\n"
                                          f"stdout: {r.stdout}\nstderr: {r.stderr}")
        return r

    def ctl_json(self, *args):
        return json.loads(self.ctl(*args, "--json").stdout)

    def mails(self):
        if not os.path.isdir(self.mail_dir):
            return []
        out = []
        for name in sorted(os.listdir(self.mail_dir)):
            if name.endswith(".eml"):
                with open(os.path.join(self.mail_dir, name), "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                with open(os.path.join(self.mail_dir, name[:-4] + ".rcpt")) as f:
                    out.append((text, f.read().split()))
        return out

    def close(self):
        if self.daemon:
            self.kill_daemon(signal.SIGTERM)
        self.stop_smtp()
        if self.ok:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print(f"test dir kept: {self.dir}\n--- bisectd log tail ---\n{self.log_tail(60)}")


def one_line_error(r, *needles):
    """bisectctl's stderr is one "bisectctl: error:" line mentioning every needle."""
    err = r.stderr.strip()
    check(err.count("\n") == 0 and err.startswith("bisectctl: error:"), f"not a one-line error: {err!r}")
    for n in needles:
        check(n in err, f"error {err!r} does not mention {n!r}")


def sleepers(tag):
    """PIDs of the processes running `sleep <tag>` (a test's build and what it detached)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", tag.encode()]:
            found.append(int(pid))
    return sorted(found)


def alive(pid):
    """Whether `pid` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z" not in f.read()
    except OSError:
        return False


def wait_for(predicate, timeout, message, interval=0.2):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise Failure(message)


def make_repo(dest, *args):
    out = subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "lib", "make_demo_repo.py"), dest, *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout.strip()


def write_job(path, **overrides):
    job = {
        "name": "demo-throughput",
        "runs": 3,
        "seconds": "0.3",
        "threshold": "5%",
    }
    job.update(overrides)
    text = f"""name: {job['name']}
build: {{recipe: command, command: [make, bench], artifacts: [bench], timeout: 120s}}
run: {{machine_group: local, command: [./bench, --seconds, "{job['seconds']}"], runs: {job['runs']}, timeout: 60s}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: {job['threshold']}}}
params: {{nr_threads: 1}}
"""
    if "extra" in job:
        text += job["extra"]
    with open(path, "w") as f:
        f.write(text)
    return path


class Db:
    """Read-only view of the daemon's SQLite store."""

    def __init__(self, path):
        self.path = path

    def rows(self, sql, *params):
        with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10) as c:
            return c.execute(sql, params).fetchall()

    def tested(self):
        r = self.rows("SELECT tested FROM heads WHERE tree = 'demo' AND branch = 'master'")
        return r[0][0] if r else None


def tested_is(env, db, sha):
    """The branch baseline is `sha`; fails at once (with the exit code) if the daemon died."""
    check(env.daemon.poll() is None, f"bisectd exited with {env.daemon.returncode}")
    return db.tested() == sha


def bisect_side_branch(env, repo, shas, job, timeout, *daemon_args):
    """Watches `repo` (make_repo --regress-on-side) with `job`, bisects base..head and checks that the side-branch
    commit was found through the merge. Returns show's JSON, the samples and boots the bisection's own requests
    stored, and the bisection's wall time in seconds."""
    env.start_daemon(*daemon_args)
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 300, "the head was never measured")
    started = time.monotonic()
    out = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["base"], "--bad", shas["head"], "--json").stdout
    bid = str(json.loads(out)["id"])
    r = env.ctl("wait", bid, "--timeout", str(timeout), expect=None)
    elapsed = time.monotonic() - started
    show = env.ctl_json("show", bid)
    check(r.returncode == 0, f"wait: exit {r.returncode}: {r.stderr[-300:]}\nshow: {json.dumps(show)[:3000]}")
    check(show["state"] == "found", f"state: {show['state']}")
    check(show["culprit"] == shas["culprit"], f"culprit {show['culprit']} != side-branch commit {shas['culprit']}"
          f" (merge {shas['merge']})")
    check(show.get("merge") == shas["merge"], f"show does not record the merge it recursed into: {show.get('merge')}")
    with sqlite3.connect(f"file:{os.path.join(env.data, 'bisectd.db')}?mode=ro", uri=True, timeout=10) as c:
        samples, boots = c.execute("SELECT COUNT(*), COUNT(DISTINCT s.boot_id) FROM samples s JOIN requests r "
                                   "ON s.request_id = r.id WHERE r.bisection_id = ?", (int(bid),)).fetchone()
    return show, samples, boots, elapsed


def run(name, test):
    """Runs `test(env)`; prints the closing line ctest and humans read; returns the exit code."""
    if not os.path.exists(os.path.join(BIN, "bisectd")):
        print(f"skipped: {BIN}/bisectd not built")
        return SKIP
    env = Env(name)

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    # ctest's timeout and Ctrl-C end the test through its `finally` blocks: daemons, boxes and servers are stopped.
    signal.signal(signal.SIGTERM, interrupted)
    try:
        test(env)
        env.ok = True
        print(f"{name}: 1 passed, 0 failed")
        return 0
    except Exception as e:  # noqa: BLE001 - any exception fails the test with its message
        print(f"FAILED: {type(e).__name__}: {e}")
        print(f"{name}: 0 passed, 1 failed")
        return 1
    finally:
        env.close()
