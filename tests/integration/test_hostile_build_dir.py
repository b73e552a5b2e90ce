#!/usr/bin/env python3
"""A kernel tree's build leaves hostile files in its build dir (issue 29, item 1), from a real build under the default
sandbox (`sandbox: auto`): a fake kernel tree whose Makefile answers tinyconfig, olddefconfig, bzImage and
kernelrelease, watched with a `kernel` recipe job. Its `make tinyconfig` makes `.config`
- a symlink to the daemon's token (olddefconfig then prints the config into the build log, as Kconfig's warnings
  quote it), or
- a sparse 1 GiB file.
Each build is refused (infra, one line naming `.config` and why, retried), and the token stays where it was: in no
build log, stored file or API answer, unchanged; the daemon's memory high-water mark stays far below the file."""
import os
import sqlite3
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, run, wait_for  # noqa: E402

MAKEFILE = """
tinyconfig:
\t@{plant}
olddefconfig:
\t@cat "$(O)/.config"
bzImage:
\t@mkdir -p "$(O)/arch/x86/boot"
\t@echo bzImage > "$(O)/arch/x86/boot/bzImage"
\t@echo vmlinux > "$(O)/vmlinux"
\t@echo 'ffffffff81000000 T _text' > "$(O)/System.map"
kernelrelease:
\t@echo 6.99.0$(LOCALVERSION)
"""

PLANTS = {
    "symlink": 'ln -sf "{token}" "$(O)/.config"',
    "sparse": 'rm -f "$(O)/.config"; truncate -s 1G "$(O)/.config"',
}

JOB = """name: {name}
build: {{recipe: kernel, config: tinyconfig, timeout: 120s}}
run: {{machine_group: local, command: [sh, -c, "echo bench.ops_per_sec: 1"], runs: 1, timeout: 60s}}
monitors: []
perf: {{stat: false, profile: false}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}}
"""

MEMORY_BOUND_KIB = 400 * 1024  # read whole, the sparse .config alone would add 1 GiB


def make_kernel_tree(dest, plant):
    os.makedirs(dest)
    with open(os.path.join(dest, "Makefile"), "w") as f:
        f.write(MAKEFILE.format(plant=plant))
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org", GIT_COMMITTER_NAME="A",
               GIT_COMMITTER_EMAIL="a@example.org", GIT_CONFIG_NOSYSTEM="1", HOME=dest)
    shas = []
    subprocess.run(["git", "init", "-q", "-b", "master", dest], check=True, env=env)
    for i in range(2):
        with open(os.path.join(dest, "NOTES"), "a") as f:
            f.write(f"commit {i}\n")
        subprocess.run(["git", "-C", dest, "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", dest, "commit", "-q", "-m", f"commit {i}"], check=True, env=env)
        shas.append(subprocess.run(["git", "-C", dest, "rev-parse", "HEAD"], check=True, env=env,
                                   capture_output=True, text=True).stdout.strip())
    return shas


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def files_holding(root, needle, skip):
    """Regular files under `root` (links not followed, files over 64 MiB skipped) whose bytes contain `needle`."""
    found = []
    for base, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            if path == skip or os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                if os.path.getsize(path) > 64 * 1024 * 1024:
                    continue
                with open(path, "rb") as f:
                    if needle in f.read():
                        found.append(path)
            except OSError:
                pass
    return found


def build_log_answers(env):
    """The build logs as GET /api/v1/logs/build/N serves them (with the token: whatever item 5 decides)."""
    with open(os.path.join(env.data, "token")) as f:
        token = f.read().strip()
    answers = []
    for n in range(1, 6):
        req = urllib.request.Request(f"{env.url}/api/v1/logs/build/{n}", headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                answers.append(r.read())
        except OSError:
            pass
    return answers


def test(env):
    env.start_daemon()  # the default config: sandbox auto
    token_path = os.path.join(env.data, "token")
    with open(token_path, "rb") as f:
        token = f.read()
    secret = token.strip()
    check(len(secret) >= 16, "the daemon's token is too short to look for")
    for case, plant in PLANTS.items():
        repo = os.path.join(env.dir, f"linux-{case}")
        shas = make_kernel_tree(repo, plant.format(token=token_path))
        job_path = os.path.join(env.dir, f"{case}.yaml")
        with open(job_path, "w") as f:
            f.write(JOB.format(name=f"hostile-{case}"))
        env.ctl("tree", "add", case, repo, "--branch", "master", "--job", job_path)
        env.ctl("bisect", "start", "--tree", case, "--good", shas[0], "--bad", shas[1])

        def settled():
            rows = env_query(env, "SELECT state, error_code, error FROM requests WHERE tree = ? AND "
                                  "(error IS NOT NULL OR state = 'done')", case)
            return rows
        wait_for(settled, 180, f"{case}: no build of the hostile tree ever ended")
        rows = settled()
        print(f"hostile-build-dir {case}: {rows[0]}")
        for state, code, error in rows:
            check(state != "done", f"{case}: a build whose .config is hostile was measured")
            check(code == "infra" and ".config: refused: " in error and "\n" not in error,
                  f"{case}: the request failed with {code}: {error}")
        if case == "sparse":
            check("larger than" in rows[0][2], f"sparse: refused for another reason: {rows[0][2]}")
        else:
            check("a symlink" in rows[0][2], f"symlink: refused for another reason: {rows[0][2]}")
        hwm = vm_hwm_kib(env.daemon.pid)
        print(f"hostile-build-dir {case}: daemon VmHWM {hwm // 1024} MiB")
        check(hwm < MEMORY_BOUND_KIB, f"{case}: the daemon's memory peaked at {hwm // 1024} MiB")
        check(env.daemon.poll() is None, "bisectd exited")
    with open(token_path, "rb") as f:
        check(f.read() == token, "the token file changed")
    leaked = files_holding(env.data, secret, token_path) + files_holding(env.dir, secret, token_path)
    check(not leaked, f"the token is in {sorted(set(leaked))}")
    check(not any(secret in answer for answer in build_log_answers(env)), "a build log served holds the token")


def env_query(env, sql, *args):
    db = sqlite3.connect(f"file:{os.path.join(env.data, 'bisectd.db')}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


if __name__ == "__main__":
    sys.exit(run("integration-hostile-build-dir", test))
