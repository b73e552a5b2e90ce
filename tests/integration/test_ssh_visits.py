#!/usr/bin/env python3
"""The ssh backend with kexec at the level of visits, on a real box: configs/lab/ssh-qemu.yaml's box-1
(scripts/lib/ssh-box.sh: a QEMU guest with dropbear, kexec-tools, bench-core and perf, reached only over ssh through
a loopback port forward) booting the base commit's kernel as its default, and tests/kernel's visit_tool driving
lab::make_machine on that lab file as bisectd reads it. One visit each:
  - install and run: the planted commit's kernel installed by kexec and booted (the visit checks `uname -r`; the
    console carries bisectd's boot marker), 2 runs of page_fault with a monitor and perf stat; the box is back on
    its default kernel afterwards;
  - a box that hangs: the kexec'd kernel frozen (QEMU monitor `stop`) as it starts: the visit fails with no sample
    after boot_timeout, naming the missing ssh, and the box is power-cycled back to its default kernel;
  - a wrong host key (known_hosts pins another key): the visit fails with one line naming the host key, and
    nothing is installed;
  - a visitor killed with SIGKILL right after its kexec (as a daemon killed mid-visit): the box is left on the
    visit's kernel; the next visit installs its kernel from there and runs.
The whole kernel bisection on two such boxes is full.ssh_kexec (`scripts/test --full`). The kernels are the kernel
tests' builds (store hits after kernel.build_boot)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, check, run, wait_for  # noqa: E402
from test_kernel_ssh import HangInjector, Lab, build_kernel, kernel_test_tree  # noqa: E402

BOX = "box-1"
WRONG_KEY = "box-1-wrong-key"
BOOT_TIMEOUT = "45s"  # kexec to ssh takes 5-25 s here (full.ssh_kexec's boots); the hung visit waits this long
MARKER = r"Command line: .*bisectd\.boot="


def values(text):
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


class Visits:
    """visit_tool on the lab file of `lab`, box-1 shortened to BOOT_TIMEOUT, plus WRONG_KEY: box-1 with a
    known_hosts that pins another host key."""

    def __init__(self, lab):
        self.lab = lab
        text = open(lab.lab_file).read()
        check("boot_timeout: 90s\n" in text, "ssh-qemu.yaml: no 'boot_timeout: 90s'")
        text = text.replace("boot_timeout: 90s\n", f"boot_timeout: {BOOT_TIMEOUT}\n")
        block = re.search(r"  - name: box-1\n(?:    .*\n)+", text).group(0)
        wrong = os.path.join(lab.boxes, "wrong_known_hosts")
        key = os.path.join(lab.dir, "other_host_key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
        with open(wrong, "w") as f:
            f.write(f"[127.0.0.1]:{lab.ports[BOX]} " + " ".join(open(key + ".pub").read().split()[:2]) + "\n")
        text += block.replace("name: box-1\n", f"name: {WRONG_KEY}\n").replace(
            "known_hosts: boxes/box-1/known_hosts\n", "known_hosts: boxes/wrong_known_hosts\n")
        with open(lab.lab_file, "w") as f:
            f.write(text)
        self.count = 0

    def argv(self, artifacts, release, machine=BOX, *extra):
        self.count += 1
        return [os.environ["BISECTD_VISIT_TOOL"], "--lab", self.lab.lab_file, "--machine", machine,
                "--artifacts", artifacts, "--release", release, "--log-dir", os.path.join(self.lab.dir, "logs"),
                "--runs", "2", "--primary", "page_fault.ops_per_sec", "--commit", f"{self.count:040x}", *extra,
                "--", "page_fault", "--seconds", "1"]

    def visit(self, *args, **kwargs):
        started = time.monotonic()
        out = subprocess.run(self.argv(*args, **kwargs), cwd=self.lab.dir, capture_output=True, text=True,
                             timeout=600)
        result = values(out.stdout)
        check(out.returncode == 0, f"visit_tool exited {out.returncode}: {out.stdout}{out.stderr[-2000:]}")
        print(f"visit: {result.get('outcome')} after {time.monotonic() - started:.1f}s: {result.get('message')}",
              flush=True)
        return result


def kexecs(lab):
    return len(re.findall(MARKER, lab.serial(BOX)))


def check_install_and_run(visits, lab, planted, default):
    artifacts, release = planted
    result = visits.visit(artifacts, release, BOX, "--monitors", "vmstat", "--perf", "stat")
    check(result["outcome"] == "ok", f"the visit failed: {result}")
    check(result["runs"] == "2" and result["run0.ok"] == "1" and result["run1.ok"] == "1", f"runs: {result}")
    check(float(result.get("run1.page_fault.ops_per_sec", 0)) > 1000, f"no plausible page_fault sample: {result}")
    check("run1.vmstat.cpu.sy" in result, f"no vmstat metric from the box: {sorted(result)}")
    check("run1.perf-stat.ps.page-faults" in result, f"no perf-stat metric from the box's perf: {sorted(result)}")
    console = open(result["console_log"], errors="replace").read()
    check(re.search(MARKER, console) and f"BISECTD-BOX release={release}" in console,
          f"the visit's console does not show {release} booting with the marker:\n{console[-2000:]}")
    lab.wait_up(BOX, default, 120)


def check_hung_box(visits, lab, planted, default):
    hang = HangInjector(lab, BOX)
    before = kexecs(lab)
    hang.start()
    result = visits.visit(*planted)
    hang.done.set()
    check(hang.frozen_at is not None and kexecs(lab) > before, f"{BOX} never kexec'd: no fault was injected")
    check(result["outcome"] in ("infra", "boot_failed") and result["runs"] == "0", f"a hung box gave {result}")
    check(re.search(rf"no ssh within {BOOT_TIMEOUT} of the kexec; power-cycled back to its default kernel",
                    result["message"]), f"the failure does not say what happened: {result['message']}")
    lab.wait_up(BOX, default, 120)


def check_wrong_host_key(visits, lab, planted):
    before = kexecs(lab)
    result = visits.visit(*planted, WRONG_KEY)
    check(result["outcome"] == "infra" and result["runs"] == "0", f"a wrong host key gave {result}")
    check("host key refused" in result["message"] and "\n" not in result["message"],
          f"the failure does not name the host key: {result['message']}")
    check(kexecs(lab) == before, "a kernel was installed on a box whose host key is wrong")


def check_killed_visitor(visits, lab, planted, default):
    artifacts, release = planted
    before = kexecs(lab)
    visitor = subprocess.Popen(visits.argv(artifacts, release), cwd=lab.dir, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: kexecs(lab) > before, 180, "the visitor never kexec'd", interval=0.2)
    finally:
        os.killpg(visitor.pid, signal.SIGKILL)
        visitor.wait(timeout=30)
    print(f"killed the visitor right after its kexec into {release}", flush=True)
    lab.wait_up(BOX, release, 120)  # left on the visit's kernel
    result = visits.visit(artifacts, release)
    check(result["outcome"] == "ok" and result["run1.ok"] == "1", f"the visit after a killed one: {result}")
    lab.wait_up(BOX, default, 120)


def test(env):
    started = time.time()
    tree = kernel_test_tree()
    default_artifacts, default = build_kernel(tree["base"])
    planted = build_kernel(tree["planted"])
    lab = Lab(os.path.join(env.dir, "lab"), boxes=(BOX,))
    try:
        lab.start(os.path.join(default_artifacts, "bzImage"))
        lab.wait_up(BOX, default, 300)
        print(f"{BOX} up on {default} after {time.time() - started:.0f}s", flush=True)
        visits = Visits(lab)
        for step in (check_install_and_run, check_hung_box, check_killed_visitor):
            step(visits, lab, planted, default)
        check_wrong_host_key(visits, lab, planted)
        print(f"timing: whole test {time.time() - started:.0f}s")
    finally:
        lab.stop()


if __name__ == "__main__":
    for program in ("qemu-system-x86_64", "/usr/sbin/dropbear", "/usr/sbin/kexec", "/bin/busybox"):
        if shutil.which(program) is None:
            print(f"skipped: {program} not installed")
            sys.exit(SKIP)
    if not os.path.exists("/usr/src/linux-source-6.1.tar.xz"):
        print("skipped: linux-source-6.1 not installed")
        sys.exit(SKIP)
    sys.exit(run("kernel.ssh_visits", test))
