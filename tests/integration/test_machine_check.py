#!/usr/bin/env python3
"""`bisectctl machine check` against a real sshd on loopback (test_ssh.Sshd: no SFTP subsystem) through the real
daemon, without a visit: a good box (every needed line ok, copies by `scp -O`, the console command attached, the
power command only looked for; with --power it runs and the box, which does not reboot, is reported as not back),
a box whose pinned key is another (reach fails, saying how to fix it), a box that logs in with a PATH without sbin
(no kexec for install: kexec; group spare, so it never gets a visit: its kexec would reboot this host), and a name
the lab does not have."""
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, check, run  # noqa: E402
from test_ssh import SSHD, Sshd, write_lab  # noqa: E402


def no_sbin_key(sshd, dir):
    """A client key the sshd logs in with PATH=/usr/bin:/bin (authorized_keys' environment=): a box without kexec."""
    key = os.path.join(dir, "nosbin_ed25519")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
    with open(key + ".pub") as f, open(os.path.join(sshd.dir, "authorized_keys"), "a") as keys:
        keys.write('environment="PATH=/usr/bin:/bin" ' + f.read())
    return key


def lines_of(stdout):
    """{check: (status, detail)} of the table bisectctl prints."""
    out = {}
    for line in stdout.splitlines()[2:]:
        m = re.match(r"^(ok|FAIL|--)\s+(\S+)\s+(.*)$", line)
        check(m, f"not a check line: {line!r}\n{stdout}")
        out[m.group(2)] = (m.group(1), m.group(3))
    return out


def test(env):
    if not os.path.exists(SSHD):
        print("skipped: sshd not installed (Debian package openssh-server)")
        sys.exit(SKIP)
    sshd = Sshd(os.path.join(env.dir, "sshd"))
    sshd.start()
    try:
        good = os.path.join(env.dir, "known_hosts")
        with open(good, "w") as f:
            f.write(sshd.known_hosts_line())
        other = os.path.join(env.dir, "other_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other], check=True)
        bad = os.path.join(env.dir, "known_hosts.other")
        with open(bad, "w") as f:
            f.write(sshd.known_hosts_line(other))
        box_dir = os.path.join(env.dir, "box")
        lab = write_lab(os.path.join(env.dir, "lab.yaml"), sshd, box_dir, [
            ("box-good", good, 3, 'console: ["sh", "-c", "echo console-line; sleep 30"]', 'power_cycle: ["true"]',
             "boot_timeout: 5s"),
            ("box-badkey", bad, 3),
            ("box-nokexec", good, 3, "group: spare", "install: kexec", f"identity_file: {no_sbin_key(sshd, env.dir)}"),
        ])
        env.start_daemon("--lab", lab)

        r = env.ctl("machine", "check", "box-good")
        print(r.stdout)
        lines = lines_of(r.stdout)
        check(r.stdout.startswith("machine box-good: ok\n"), f"first line: {r.stdout}")
        for name in ("reach", "root", "disk", "copy", "console", "power"):
            check(lines.get(name, ("",))[0] == "ok", f"box-good: {name}: {lines.get(name)}")
        check("answers:" in lines["reach"][1], lines["reach"])
        check(lines["copy"][1] == "copies use scp -O", lines["copy"])
        check(re.search(r"attached: [1-9]\d* bytes", lines["console"][1]), lines["console"])
        check(lines["power"][1].startswith("would run true"), lines["power"])
        check(os.listdir(box_dir) == [], f"the check left files in kernel_dir: {os.listdir(box_dir)}")
        reply = json.loads(env.ctl("machine", "check", "box-good", "--json").stdout)
        check(reply["ok"] is True and {c["check"] for c in reply["checks"]} >= {"reach", "copy", "power"}, reply)

        r = env.ctl("machine", "check", "box-good", "--power", expect=1)
        power = lines_of(r.stdout)["power"]
        print("--power: " + str(power))
        check(power[0] == "FAIL" and "did not answer within 5s after the power cycle" in power[1], power)
        check("box-good is not ready: power" in r.stderr, r.stderr)

        r = env.ctl("machine", "check", "box-badkey", expect=1)
        print(r.stdout)
        reach = lines_of(r.stdout)["reach"]
        check(reach[0] == "FAIL" and reach[1].startswith("host key refused") and "ssh-keyscan" in reach[1], reach)
        check("kexec" not in lines_of(r.stdout), "a box that did not answer was asked more")

        r = env.ctl("machine", "check", "box-nokexec", expect=1)
        print(r.stdout)
        lines = lines_of(r.stdout)
        check(lines["kexec"][0] == "FAIL" and "no kexec on the box's PATH" in lines["kexec"][1], lines["kexec"])
        for name in ("reach", "root", "disk", "copy"):
            check(lines[name][0] == "ok", f"box-nokexec: {name}: {lines[name]}")

        r = env.ctl("machine", "check", "nosuch", expect=1)
        check("box-good, box-badkey, box-nokexec" in r.stderr, f"unknown machine: {r.stderr}")
        try:
            urllib.request.urlopen(urllib.request.Request(env.url + "/api/v1/machines/box-good/check", data=b"{}",
                                                          method="POST"), timeout=30)
            check(False, "a check without the token was answered")
        except urllib.error.HTTPError as e:
            check(e.code == 401, f"without the token: HTTP {e.code}")
        env.ok = True
    finally:
        sshd.stop()


if __name__ == "__main__":
    sys.exit(run("machine_check", test))
