#!/usr/bin/env python3
"""The userspace pipeline through an `ssh` machine: a real sshd started by the test on a loopback port, with its own
host key and authorized_keys; the lab file pins that host key in known_hosts. The benchmark is copied to the "box"
(install: none) and run there over ssh; the bisection finds the planted culprit. The sshd has no SFTP subsystem (a
minimal sshd_config), so copies fall back to `scp -O`. A second daemon whose known_hosts holds another key is refused
with a clear error, and its known_hosts is left unchanged (the key is never learned); its other box has no working
scp at all and gets its files by `cat` over ssh."""
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, Env, check, free_port, git, make_repo, run, wait_for  # noqa: E402

SSHD = "/usr/sbin/sshd"


def current_user():
    return pwd.getpwuid(os.getuid()).pw_name


class Sshd:
    """sshd -D on 127.0.0.1:PORT as the current user, config, keys and pid file in `dir`; stopped by PID. No SFTP
    subsystem: OpenSSH's scp (SFTP by default since 9.0) fails against it with "scp: Connection closed". An
    authorized key may set PATH (PermitUserEnvironment PATH: test_machine_check's box without kexec)."""

    def __init__(self, dir):
        self.dir = dir
        os.makedirs(dir, exist_ok=True)
        self.port = free_port()
        self.host_key = os.path.join(dir, "host_ed25519")
        self.client_key = os.path.join(dir, "client_ed25519")
        self.log = os.path.join(dir, "sshd.log")
        for key in (self.host_key, self.client_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bisectd-test", "-f", key],
                           check=True)
        shutil.copy(self.client_key + ".pub", os.path.join(dir, "authorized_keys"))
        os.chmod(os.path.join(dir, "authorized_keys"), 0o600)
        self.config = os.path.join(dir, "sshd_config")
        with open(self.config, "w") as f:
            f.write(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {self.host_key}
PidFile {dir}/sshd.pid
AuthorizedKeysFile {dir}/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PermitUserEnvironment PATH
StrictModes no
UsePAM no
AllowUsers {current_user()}
LogLevel VERBOSE
""")
        self.proc = None

    def known_hosts_line(self, key_file=None):
        with open((key_file or self.host_key) + ".pub") as f:
            kind, blob = f.read().split()[:2]
        return f"[127.0.0.1]:{self.port} {kind} {blob}\n"

    def start(self):
        # Privilege separation needs /run/sshd (made by the systemd unit elsewhere).
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        log = open(self.log, "a")
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", self.config], stdout=log, stderr=log)

        def listening():
            check(self.proc.poll() is None, f"sshd exited with {self.proc.returncode}: {open(self.log).read()}")
            r = subprocess.run(["ssh-keyscan", "-p", str(self.port), "-T", "2", "127.0.0.1"], capture_output=True)
            return r.returncode == 0 and r.stdout
        wait_for(listening, 20, "sshd did not listen", interval=0.5)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def accepted(self):
        with open(self.log) as f:
            return f.read().count("Accepted publickey")


def write_lab(path, sshd, box_dir, boxes):
    """boxes: [(name, known_hosts, quarantine_after[, "key: value" settings...])], all this host's sshd, in group
    `boxes` unless a "group: G" says otherwise; a setting given replaces the default of that key."""
    text = "machines:\n"
    for name, known_hosts, quarantine_after, *extra in boxes:
        given = dict(line.split(": ", 1) for line in extra)
        settings = {"host": "127.0.0.1", "port": sshd.port, "user": current_user(), "identity_file": sshd.client_key,
                    "known_hosts": known_hosts, "install": "none", "kernel_dir": box_dir, "ssh_timeout": "20s",
                    "quarantine_after": quarantine_after}
        settings.update({k: v for k, v in given.items() if k != "group"})
        text += f"  - name: {name}\n    group: {given.get('group', 'boxes')}\n    backend: ssh\n    settings:\n"
        text += "".join(f"      {key}: {value}\n" for key, value in settings.items())
    with open(path, "w") as f:
        f.write(text)
    return path


def write_ssh_job(path):
    with open(path, "w") as f:
        f.write("""name: demo-throughput
build: {recipe: command, command: [make, bench], artifacts: [bench], timeout: 120s}
run: {machine_group: boxes, command: [./bench, --seconds, "0.3"], runs: 3, timeout: 60s}
metrics: {parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}
params: {nr_threads: 1}
verify: {pairs: 4, revert: false, layout: false}   # every visit is an ssh round trip: keep the test short
monitors: [proc-vmstat, vmstat, softirqs, time]
""")
    return path


def check_monitors(env, commit):
    """The job's monitors came back in each run's own ssh command: the culprit's samples carry them as metrics, the
    run logs only the benchmark's output; what the remote shell cannot know (a child's context switches) is absent."""
    samples = env.ctl_json("results", commit)["samples"]
    check(samples, f"no sample of {commit}")
    for s in samples:
        names = s["metrics"]
        check("bench.ops_per_sec" in names, f"the primary metric is gone: {sorted(names)}")
        for family in ("proc-vmstat.", "vmstat.", "softirqs.", "time."):
            check(any(n.startswith(family) for n in names), f"no {family}* metric in a box sample: {sorted(names)}")
        check(names.get("time.minor_page_faults", 0) > 0, f"time.minor_page_faults: {names.get('time.minor_page_faults')}")
        check("time.voluntary_context_switches" not in names, "a context switch count the box cannot know")
        check("interrupts.LOC:Local_timer_interrupts" not in names, "a monitor the job did not choose")
    example = samples[0]["metrics"]
    print("monitors over ssh: " + ", ".join(f"{n} {example[n]:g}" for n in (
        "vmstat.system.cs", "vmstat.cpu.us", "proc-vmstat.pgfault", "softirqs.TIMER", "time.elapsed_time",
        "time.user_time", "time.minor_page_faults") if n in example))


def check_copies_by(env, box, protocol):
    """The daemon found, on its first copy to `box`, that only `protocol` works there, and said so once."""
    lines = [l.strip() for l in open(env.log_path) if f"ssh {box}: copies use {protocol} (" in l]
    check(len(lines) == 1, f"{len(lines)} 'copies use {protocol}' lines for {box}:\n" + env.log_tail())
    print(f"{box}: {lines[0]}")


def wrong_key_quarantine(sshd, repo, job, box_dir, good_known_hosts):
    """box-bad's known_hosts pins another key: its visit is refused with a clear error, nothing is learned, and after
    one infra failure (quarantine_after: 1) it is quarantined; the queued request goes to box-good of the same
    group (whose `scp` always fails, as on a box with neither SFTP nor scp: its files go by `cat` over ssh);
    `bisectctl machine release` returns box-bad."""
    env = Env("ssh-wrong-key")
    try:
        other = os.path.join(env.dir, "other_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other], check=True)
        known = os.path.join(env.dir, "known_hosts")
        with open(known, "w") as f:
            f.write(sshd.known_hosts_line(other))
        before = open(known).read()
        lab = write_lab(os.path.join(env.dir, "lab.yaml"), sshd, box_dir,
                        [("box-bad", known, 1), ("box-good", good_known_hosts, 3, "scp: [\"false\"]")])
        env.start_daemon("--lab", lab)
        env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)

        def refused():
            with open(env.log_path) as f:
                return "host key refused (not the one pinned in known_hosts)" in f.read()
        wait_for(refused, 120, "no 'host key refused' error in the log:\n" + env.log_tail())
        line = next(l for l in open(env.log_path) if "host key refused" in l)
        print("wrong key: " + line.strip())
        check("ssh box-bad: host key refused" in line and "Host key verification failed" in line,
              f"the error does not name the box and quote ssh: {line}")
        check(open(known).read() == before, "known_hosts was changed: the other key was learned")

        def machine(name):
            return next(m for m in env.ctl_json("status")["machines"] if m["name"] == name)
        wait_for(lambda: machine("box-bad")["state"] == "quarantined", 30, "box-bad was not quarantined")
        check("host key refused" in (machine("box-bad")["quarantine_reason"] or ""), f"reason: {machine('box-bad')}")
        check("quarantined: box-bad: " in env.ctl("status").stdout, "bisectctl status does not show the quarantine")
        # The refused request is retried after its backoff, on the group's other machine.
        wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 180,
                 "the request refused on box-bad was never done on box-good")
        check(machine("box-bad")["state"] == "quarantined", "box-bad got out of quarantine by itself")
        check_copies_by(env, "box-good", "cat")
        r = env.ctl("machine", "release", "nosuch", expect=None)
        check(r.returncode != 0 and "nosuch" in r.stderr, f"release of an unknown machine: {r.returncode} {r.stderr}")
        check("released" in env.ctl("machine", "release", "box-bad").stdout, "release did not say so")
        check(machine("box-bad")["state"] != "quarantined", "box-bad is still quarantined after the release")
        r = env.ctl("machine", "release", "box-bad", expect=None)
        check(r.returncode != 0 and "not quarantined" in r.stderr, f"second release: {r.returncode} {r.stderr}")
        env.ok = True
    finally:
        env.close()


def test(env):
    if not os.path.exists(SSHD):
        print("skipped: sshd not installed (Debian package openssh-server)")
        sys.exit(SKIP)
    started = time.time()
    sshd = Sshd(os.path.join(env.dir, "sshd"))
    env.sshd = sshd
    sshd.start()
    box_dir = os.path.join(env.dir, "box")  # the "box" is this host: its per-visit dirs go here
    known = os.path.join(env.dir, "known_hosts")
    with open(known, "w") as f:
        f.write(sshd.known_hosts_line())

    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--split-at", "8")
    job = write_ssh_job(os.path.join(env.dir, "job.yaml"))
    try:
        wrong_key_quarantine(sshd, repo, job, box_dir, known)
        accepted_before = sshd.accepted()

        env.start_smtp()
        env.start_daemon("--lab", write_lab(os.path.join(env.dir, "lab.yaml"), sshd, box_dir, [("box-1", known, 3)]))
        env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job, "--notify",
                "Watcher <watch@example.org>")
        wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 300,
                 "the baseline head was never measured over ssh")
        git(repo, "update-ref", "refs/heads/master", shas["head"])
        wait_for(lambda: env.ctl_json("bisections")["bisections"], 600, "no bisection opened after the push")
        bisection = env.ctl_json("bisections")["bisections"][0]
        r = env.ctl("wait", str(bisection["id"]), "--timeout", "900", expect=None, timeout=960)
        show = env.ctl_json("show", str(bisection["id"]))
        check(r.returncode == 0, f"wait: exit {r.returncode}: {r.stderr[-500:]}\nshow: {show}")
        check(show["state"] == "found", f"state: {show['state']}")
        check(show["culprit"] == shas["culprit"], f"culprit {show['culprit']} != planted {shas['culprit']}")

        # Every sample came over ssh: sshd accepted the daemon's key, the runs' dirs were made and removed.
        visits = sshd.accepted() - accepted_before
        check(visits >= show["runs"] // 3, f"sshd accepted {visits} connections for {show['runs']} runs")
        check(os.path.isdir(box_dir) and os.listdir(box_dir) == [], f"per-visit dirs left on the box: {box_dir}")
        machines = env.ctl_json("status").get("machines", [])
        check(any(m.get("name") == "box-1" and "thread" in m.get("description", "") for m in machines),
              f"the box's description was not read over ssh: {machines}")
        check_monitors(env, shas["culprit"])
        check_copies_by(env, "box-1", "scp -O")
        r = env.ctl("machine", "check", "box-1")
        print("machine check box-1:\n" + r.stdout)
        check(re.search(r"^ok\s+copy\s+copies use scp -O", r.stdout, re.M) and "machine box-1: ok" in r.stdout,
              f"check of the good box:\n{r.stdout}")
        wait_for(lambda: len(env.mails()) >= 1, 120, "no mail arrived")
        text = env.mails()[0][0]
        check("thread" in text and "memory" in text, "the report does not name the box as it described itself")
        print(f"ssh: culprit found over ssh in {time.time() - started:.0f}s, {show['runs']} runs, "
              f"{visits} ssh connections")
    finally:
        sshd.stop()


if __name__ == "__main__":
    sys.exit(run("ssh", test))
