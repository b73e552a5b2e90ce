#!/usr/bin/env python3
"""Disk full during a build: the data dir (worktree, builds, logs, database) is on a small tmpfs this test mounts;
the build of the commit before the regression writes until the disk is full and fails, leaving its partial file
(as most builds do). The failure is infra, not "unbuildable": nothing is stored of it, the daemon keeps answering on
a full disk; once the file is deleted (an operator frees space) the commit is built again after the back-off,
measured, and the planted culprit is found; the database passes its integrity check. Skipped when mounting is not
permitted here (not root, no CAP_SYS_ADMIN). Run with `sandbox: none` (see FILL_BUILD)."""
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_lib import BAD, GOOD, NORMAL_BENCH, make_tree, query, write_job  # noqa: E402
from harness import SKIP, check, run, wait_for  # noqa: E402

SIZE_MB = 96
FULL_HOLD_S = 4
FULL_LOG_LINES_BOUND = 6  # each failing store write is logged when it starts failing, not at every tick

# Fills the disk once (a marker outside the data dir: the worktree is cleaned between builds), leaving the partial
# file in the worktree.
# Until the test has freed the space (its marker), every build of this commit fills the disk: the prebuilder's and
# the request's may come one right after the other, and the second must not find the space the first one's
# worktree clean-up gave back.
FILL_BUILD = """if [ ! -e {marker} ]; then
  head -c 4G /dev/zero > fill.bin
  echo "build: cannot write fill.bin" >&2
  exit 1
fi
"""


def mount_tmpfs(path):
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m,mode=0700", "tmpfs", path],
                          capture_output=True, text=True)


def answers(env):
    try:
        with urllib.request.urlopen(env.url + "/api/v1/status", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def fill_files(data):
    return [os.path.join(root, "fill.bin") for root, _, files in os.walk(data) if "fill.bin" in files]


def free_space_and_wait(env, bid, freed_marker, name):
    """The operator frees the space (the marker tells the fillers to stop); then the bisection is waited for.
    Returns bisectctl wait's result and the bisection as shown."""
    open(freed_marker, "w").close()
    for path in fill_files(env.data):
        os.remove(path)
    freed = time.time()
    r = env.ctl("wait", bid, "--timeout", "240", expect=None)
    show = env.ctl_json("show", bid)
    print(f"{name}: bisection {show['state']} {time.time() - freed:.0f}s after the space was freed, culprit "
          f"{show['culprit']}")
    return r, show


def run_on_small_disk(name, scenario):
    """Runs `scenario(env, mount)` with a SIZE_MB tmpfs mounted at `mount` (unmounted after); skipped where mounting
    is not permitted."""
    why = mount_permitted()
    if why:
        print(f"skipped: cannot mount a tmpfs here ({why}): the disk-full scenario is not exercised")
        return SKIP

    def test(env):
        mount = os.path.join(env.dir, "small")
        os.makedirs(mount)
        r = mount_tmpfs(mount)
        check(r.returncode == 0, f"mount: {r.stderr}")
        try:
            scenario(env, mount)
        finally:
            if env.daemon:
                env.kill_daemon()
            subprocess.run(["umount", mount], check=True)

    return run(name, test)


def full_disk(env, mount):
    env.data = os.path.join(mount, "data")
    benches = [NORMAL_BENCH.format(mean=GOOD)] * 6 + [NORMAL_BENCH.format(mean=BAD)] * 4
    builds = ["true\n"] * 10
    freed_marker = os.path.join(env.dir, "freed")
    builds[5] = FILL_BUILD.format(marker=freed_marker)  # before the regression: measured
    shas = make_tree(os.path.join(env.dir, "repo"), benches, builds)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    config = os.path.join(env.dir, "bisectd.yaml")
    with open(config, "w") as f:
        f.write("sandbox: none\n")  # the build sees its marker outside the data dir (bwrap would hide /tmp)
    env.start_daemon("--config", config)
    env.ctl("tree", "add", "demo", os.path.join(env.dir, "repo"), "--branch", "master", "--job", job)
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas[0], "--bad", shas[-1]).stdout.strip()

    def disk_full():
        st = os.statvfs(mount)
        return fill_files(env.data) and st.f_bavail * st.f_frsize < 1024 * 1024
    wait_for(disk_full, 120, "the build never filled the disk")
    print(f"disk-full: {SIZE_MB} MiB tmpfs filled by the build of {shas[5][:10]}")
    held = time.time()
    while time.time() - held < FULL_HOLD_S:
        check(env.daemon.poll() is None, "bisectd exited on a full disk")
        check(answers(env), "the API did not answer on a full disk")
        time.sleep(0.5)
    r, show = free_space_and_wait(env, bid, freed_marker, "disk-full")
    log = open(env.log_path, errors="replace").read()
    full = [line for line in log.splitlines() if "with the disk full" in line]
    print("disk-full: " + ("\n  ".join(full) or "no failure said the disk was full"))
    check(full, "no build failure said the disk was full")
    refused = log.count("the failure could not be stored")
    flood = log.count("database or disk is full")
    print(f"disk-full: the store refused a request's failure {refused} time(s); {flood} log lines name the full disk")
    check(flood <= FULL_LOG_LINES_BOUND, f"{flood} log lines name the full disk (a line every tick?)")
    check(not refused or "its failure stored at try" in log, "a failure the store refused was never stored")
    flags = query(env, "SELECT flag, message FROM commit_flags WHERE commit_sha = ?", shas[5])
    check(not flags, f"the commit that met the full disk is flagged: {flags}")
    check(r.returncode == 0 and show["state"] == "found" and show["culprit"] == shas[6],
          f"bisection {show['state']} {show['culprit']} (planted {shas[6]}): {r.stderr[-300:]}")
    check(query(env, "PRAGMA integrity_check") == [("ok",)], "the database fails its integrity check")


def mount_permitted():
    probe = tempfile.mkdtemp(prefix="bisectd-mount-probe-")
    try:
        r = mount_tmpfs(probe)
        if r.returncode != 0:
            return r.stderr.strip() or f"mount exited {r.returncode}"
        subprocess.run(["umount", probe], check=True)
        return None
    except OSError as e:
        return str(e)
    finally:
        os.rmdir(probe)


if __name__ == "__main__":
    sys.exit(run_on_small_disk("faults-disk-full", full_disk))
