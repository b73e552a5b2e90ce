"""Shared pieces of the fault-injection tests: a small generated tree whose benchmark is a Python script chosen per
commit (so one commit can print garbage, or a build can hang), read-only looks into the daemon's database, and the
daemon's memory high-water mark. Built on tests/integration/harness.py (real bisectd, bisectctl, SMTP server)."""
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "integration"))
import harness  # noqa: E402

GOOD, BAD = 1000.0, 700.0

# A benchmark that prints one value with 1 % noise (the mean of `mean`): what every ordinary commit runs.
NORMAL_BENCH = """import random
print("progress: warming up")
print("bench.ops_per_sec: %.1f" % ({mean} * (1 + random.gauss(0, 0.01))))
"""


def git_env(dest, n):
    env = dict(os.environ)
    env.update({"GIT_AUTHOR_NAME": "Fault Author", "GIT_AUTHOR_EMAIL": "author@example.org",
                "GIT_COMMITTER_NAME": "Fault Committer", "GIT_COMMITTER_EMAIL": "committer@example.org",
                "GIT_CONFIG_NOSYSTEM": "1", "HOME": dest,
                "GIT_AUTHOR_DATE": f"{1700000000 + n * 60} +0000", "GIT_COMMITTER_DATE": f"{1700000000 + n * 60} +0000"})
    return env


def make_tree(dest, benches, build_sh="true"):
    """A repo whose commit i has bench.py = benches[i] and build.sh = build_sh (or build_sh[i] if a list).
    Returns the shas in order."""
    os.makedirs(dest)
    subprocess.run(["git", "init", "-q", "-b", "master", dest], check=True)
    shas = []
    for i, bench in enumerate(benches):
        with open(os.path.join(dest, "bench.py"), "w") as f:
            f.write(bench)
        with open(os.path.join(dest, "build.sh"), "w") as f:
            f.write(build_sh[i] if isinstance(build_sh, list) else build_sh)
        with open(os.path.join(dest, "NOTES"), "a") as f:
            f.write(f"commit {i}\n")
        env = git_env(dest, i)
        subprocess.run(["git", "-C", dest, "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", dest, "commit", "-q", "-m", f"commit {i}"], check=True, env=env)
        shas.append(subprocess.run(["git", "-C", dest, "rev-parse", "HEAD"], check=True, env=env,
                                   capture_output=True, text=True).stdout.strip())
    return shas


def write_job(path, name="fault-job", runs=2, build_timeout="120s", run_timeout="60s"):
    with open(path, "w") as f:
        f.write(f"""name: {name}
build: {{recipe: command, command: [sh, build.sh], artifacts: [bench.py], timeout: {build_timeout}}}
run: {{machine_group: local, command: [python3, bench.py], runs: {runs}, timeout: {run_timeout}}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}}
""")
    return path


def query(env, sql, *args):
    """Rows of a read-only query on the daemon's database (the daemon may be running: WAL readers do not block)."""
    db = sqlite3.connect(f"file:{os.path.join(env.data, 'bisectd.db')}?mode=ro", uri=True, timeout=30)
    db.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def vm_kib(pid, field):
    """VmHWM / VmRSS of a process in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise harness.Failure(f"no {field} in /proc/{pid}/status")


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def bisect_planted(env, shas, job):
    """Adds the tree (mailing a watcher) and bisects shas[0]..shas[-1]; checks the planted culprit shas[4] was
    found. Returns the bisection id."""
    env.ctl("tree", "add", "demo", os.path.join(env.dir, "repo"), "--branch", "master", "--job", job,
            "--notify", "Watcher <watch@example.org>")
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas[0], "--bad", shas[-1]).stdout.strip()
    r = env.ctl("wait", bid, "--timeout", "240", expect=None)
    show = env.ctl_json("show", bid)
    harness.check(show["state"] == "found" and show["culprit"] == shas[4], f"bisection: {show['state']} "
                  f"{show['culprit']} (planted {shas[4]}): {r.stderr[-300:]}")
    return bid
