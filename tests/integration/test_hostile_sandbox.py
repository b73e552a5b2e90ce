#!/usr/bin/env python3
"""The sandbox hides the secrets bisectd knows of: a build that reads the config file and the SMTP password file
and lists /run leaves none of it in the data dir (its logs). `sandbox: auto` never falls back silently: with bwrap
unusable it logs an error and `bisectctl status` says so, and under systemd (INVOCATION_ID set) bisectd refuses to
start."""
import os
import re
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, SOURCE, check, free_port, make_repo, run, wait_for, write_job  # noqa: E402

PASSWORD = "s3cret-smtp-password"
CONFIG_MARK = "config-file-secret-mark"


def files_containing(root, needle):
    """Files under `root` whose bytes match the regular expression `needle`."""
    pattern = re.compile(needle.encode())
    found = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                with open(path, "rb") as f:
                    if pattern.search(f.read()):
                        found.append(path)
            except OSError:
                continue
    return found


def secrets_hidden(env):
    secrets = os.path.join(env.dir, "secrets")
    os.makedirs(secrets)
    password_file = os.path.join(secrets, "smtp-password")
    with open(password_file, "w") as f:
        f.write(PASSWORD + "\n")
    config = os.path.join(env.dir, "bisectd.yaml")
    with open(config, "w") as f:
        f.write(f"# {CONFIG_MARK}\nmail: {{transport: mbox, user: robot, password_file: {password_file}}}\n")
    repo = os.path.join(env.dir, "repo")
    make_repo(repo, "--commits", "3")
    job = write_job(os.path.join(env.dir, "job.yaml"))
    with open(job) as f:
        text = f.read()
    peek = f"cat {password_file} {config} 2>&1; echo RUN:[$(ls -A /run | wc -l)]; make bench"
    text = text.replace("command: [make, bench]", f"command: [sh, -c, '{peek}']")
    with open(job, "w") as f:
        f.write(text)
    env.start_daemon("--config", config)
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    wait_for(lambda: files_containing(env.data, r"RUN:\[\d+\]"), 300, "the build never ran")
    logs = files_containing(env.data, r"RUN:\[\d+\]")
    check(files_containing(env.data, r"RUN:\[0\]"), f"the build saw the host's /run: {logs}")
    check(not files_containing(env.data, PASSWORD), "the SMTP password reached the data dir (a build log)")
    check(not files_containing(env.data, CONFIG_MARK), "the config file's text reached the data dir (a build log)")
    env.kill_daemon(signal.SIGTERM)


def no_silent_fallback(env):
    fake = os.path.join(env.dir, "fake-bin")
    os.makedirs(fake)
    bwrap = os.path.join(fake, "bwrap")
    with open(bwrap, "w") as f:
        f.write("#!/bin/sh\necho 'bwrap: creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    os.chmod(bwrap, stat.S_IRWXU)
    base_env = {k: v for k, v in os.environ.items() if k not in ("INVOCATION_ID", "NOTIFY_SOCKET", "JOURNAL_STREAM")}
    base_env["PATH"] = fake + ":" + base_env.get("PATH", "/usr/bin:/bin")
    data, port = os.path.join(env.dir, "data2"), free_port()
    args = [os.path.join(BIN, "bisectd"), "--data-dir", data, "--listen", f"127.0.0.1:{port}"]

    under_systemd = subprocess.run(args, env=dict(base_env, INVOCATION_ID="0123456789abcdef"), capture_output=True,
                                   text=True, timeout=60)
    check(under_systemd.returncode != 0, "under systemd, bisectd started without a usable bwrap")
    check("under systemd" in under_systemd.stderr and "sandbox" in under_systemd.stderr,
          f"the refusal does not say why: {under_systemd.stderr[-500:]}")

    log_path = os.path.join(env.dir, "fallback.log")
    with open(log_path, "w") as log:
        daemon = subprocess.Popen(args, env=base_env, stdout=log, stderr=log)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and "listening" not in open(log_path).read():
            check(daemon.poll() is None, f"bisectd exited: {open(log_path).read()[-500:]}")
            time.sleep(0.2)
        text = open(log_path).read()
        check("[error] sandbox: auto:" in text and "UNSANDBOXED" in text,
              f"the fallback to no sandbox is not an error in the log: {text[-800:]}")
        ctl_env = dict(os.environ, BISECTD_URL=f"http://127.0.0.1:{port}",
                       BISECTD_TOKEN_FILE=os.path.join(data, "token"))
        status = subprocess.run([os.path.join(BIN, "bisectctl"), "status"], env=ctl_env, capture_output=True,
                                text=True, timeout=60)
        check(status.returncode == 0 and "UNSANDBOXED" in status.stdout and "bwrap cannot start" in status.stdout,
              f"bisectctl status does not say the trees' code runs unsandboxed: {status.stdout}{status.stderr}")
    finally:
        daemon.terminate()
        daemon.wait(30)


def unit_lets_bwrap_work():
    """The systemd unit runs as its own user and lets bwrap make its namespaces and mount a fresh /proc: no
    RestrictNamespaces=yes, none of the settings that overmount parts of /proc (the kernel then refuses bwrap's
    --proc: "mount too revealing")."""
    with open(os.path.join(SOURCE, "packaging", "bisectd.service.in")) as f:
        unit = f.read()
    check(re.search(r"^User=bisectd$", unit, re.M), "the unit does not run as its own user")
    allowed = re.search(r"^RestrictNamespaces=(.*)$", unit, re.M)
    needed = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"}
    check(allowed and needed <= set(allowed.group(1).split()),
          f"RestrictNamespaces= keeps bwrap from its namespaces: {allowed and allowed.group(0)}")
    for setting in ("ProtectKernelTunables", "ProtectKernelLogs", "ProtectHostname", "ProtectProc", "ProcSubset"):
        value = re.search(rf"^{setting}=(\S+)", unit, re.M)
        check(not value or value.group(1) in ("no", "false", "default", "all"),
              f"{setting}={value and value.group(1)} overmounts /proc: bwrap cannot mount its own")


def test(env):
    unit_lets_bwrap_work()
    secrets_hidden(env)
    no_silent_fallback(env)


if __name__ == "__main__":
    sys.exit(run("hostile_sandbox", test))
