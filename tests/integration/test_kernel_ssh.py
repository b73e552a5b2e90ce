#!/usr/bin/env python3
"""The kernel scenario on a lab of real boxes reached only over ssh: configs/lab/ssh-qemu.yaml's two QEMU guests
(scripts/lib/ssh-box.sh: dropbear, kexec-tools, bench-core, perf) booting the base commit's kernel as their default;
bisectd installs each candidate with kexec. The same tree, planted commit, job and kernel build cache as
kernel.bisect (run after it, the builds are reused from its store: this test pays boots, not compiles).
Fault: box-2's first kexec'd kernel is frozen by the test (QEMU monitor `stop`) as soon as its console shows it
booting: the daemon must power-cycle box-2 (ssh-box.sh kills QEMU by PID and boots the default kernel again), end
that visit infra/boot_failed and have the work done on a box that answers; the bisection must still be right and
mailed. The job's system monitors and perf must come back from the boxes as metrics of their samples (vmstat.*,
softirqs.*, perf-stat.*, perf-profile.*).
Prints the boot-by-kexec times (kexec -e → ssh answers with the new `uname -r`) and the whole test's time."""
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, SOURCE, check, free_port, git, run, wait_for  # noqa: E402
from test_kernel_bisect import bisect_the_push, kernel_series, persistent_data_dir, progress, write_test_job  # noqa: E402

BOX_SCRIPT = os.path.join(SOURCE, "scripts", "lib", "ssh-box.sh")
BOXES = ("box-1", "box-2")
HUNG = "box-2"


def kernel_test_tree():
    """The kernel tests' tree, worktree, build root and store (tests/kernel/kernel-worktree.sh): {root, tree,
    worktree, build_root, store, base, planted}."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = os.environ.get("BISECTD_KERNEL_TEST_DIR") or os.path.join(cache, "bisectd", "kernel-test")
    made = subprocess.run([os.path.join(SOURCE, "tests", "kernel", "kernel-worktree.sh"), root], check=True,
                          capture_output=True, text=True)
    return {"root": root, **dict(line.split(": ", 1) for line in made.stdout.splitlines())}


def build_kernel(commit):
    """The bzImage's artifact dir and the release of `commit`'s kernel, built with kernel_lab_tool into the kernel
    tests' store (kernel.build_boot builds the base, the planted commit and its parent with the same recipe, so this
    is normally a store hit)."""
    tree = kernel_test_tree()
    git(tree["worktree"], "-c", "advice.detachedHead=false", "checkout", "-q", "-f", "--detach", commit)
    out = subprocess.run([os.environ["BISECTD_KERNEL_LAB_TOOL"], "build", "--tree", tree["tree"], "--worktree",
                          tree["worktree"], "--commit", commit, "--store", tree["store"],
                          "--build-root", tree["build_root"], "--fragment",
                          os.path.join(SOURCE, "configs", "kconfig", "qemu-x86_64.config")],
                         capture_output=True, text=True, timeout=3600)
    values = dict(line.split(": ", 1) for line in out.stdout.splitlines() if ": " in line)
    check(out.returncode == 0 and values.get("outcome") == "ok", f"kernel build of {commit}: {out.stdout}{out.stderr}")
    return values["artifact_dir"], values["kernel_release"]


class Lab:
    """configs/lab/ssh-qemu.yaml in `dir` (bisectd's cwd) with free ports, a box image, the boxes' ssh key."""

    def __init__(self, dir, boxes=BOXES):
        self.dir = dir
        self.names = boxes
        self.boxes = os.path.join(dir, "boxes")
        os.makedirs(self.boxes, exist_ok=True)
        os.symlink(BOX_SCRIPT, os.path.join(dir, "ssh-box.sh"))
        key = os.path.join(dir, "id_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bisectd-test", "-f", key], check=True)
        bench = os.environ["BISECTD_BENCH_CORE_DIR"]
        self.box(["image", self.boxes, bench, key + ".pub"])
        text = open(os.path.join(SOURCE, "configs", "lab", "ssh-qemu.yaml")).read()
        self.ports = {}
        for name, default in zip(BOXES, ("47022", "47023")):
            self.ports[name] = free_port()
            check(f"port: {default}\n" in text, f"ssh-qemu.yaml: no 'port: {default}' for {name}")
            text = text.replace(f"port: {default}\n", f"port: {self.ports[name]}\n")
        self.lab_file = os.path.join(dir, "ssh-qemu.yaml")
        with open(self.lab_file, "w") as f:
            f.write(text)
        self.key = key

    def start(self, kernel):
        for name in self.names:  # the boxes die with this process, even when it is killed before `finally`
            self.box(["start", self.boxes, name, str(self.ports[name]), kernel], BOX_OWNER_PID=str(os.getpid()))

    def box(self, args, **env):
        subprocess.run([BOX_SCRIPT, *args], check=True, cwd=self.dir, timeout=120, env={**os.environ, **env})

    def serial(self, name):
        try:
            with open(os.path.join(self.boxes, name, "serial.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def ssh(self, name, command, timeout=20):
        return subprocess.run(["ssh", "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                               "-o", "UserKnownHostsFile=" + os.path.join(self.boxes, name, "known_hosts"),
                               "-o", "GlobalKnownHostsFile=/dev/null", "-o", "ConnectTimeout=5",
                               "-o", "IdentitiesOnly=yes", "-i", self.key, "-p", str(self.ports[name]),
                               "root@127.0.0.1", command], capture_output=True, text=True, timeout=timeout)

    def wait_up(self, name, release, timeout):
        def up():
            try:
                r = self.ssh(name, "uname -r")
            except subprocess.TimeoutExpired:
                return False
            return r.returncode == 0 and r.stdout.strip() == release
        wait_for(up, timeout, f"{name} did not answer over ssh on {release}:\n{self.serial(name)[-2000:]}", 1)

    def monitor(self, name, command):
        """One command to the box's QEMU human monitor (its unix socket)."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(os.path.join(self.boxes, name, "monitor.sock"))
            s.sendall(command.encode() + b"\n")
            time.sleep(0.5)

    def stop(self):
        for name in self.names:
            subprocess.run([BOX_SCRIPT, "stop", self.boxes, name], cwd=self.dir, timeout=60)


class HangInjector(threading.Thread):
    """Freezes `name`'s CPUs (monitor `stop`) the first time its console shows a kexec'd kernel starting (its
    command line carries bisectd's boot marker): a kernel that never brings ssh back, until the power cycle."""

    def __init__(self, lab, name):
        super().__init__(daemon=True)
        self.lab, self.name = lab, name
        self.seen = len(lab.serial(name))  # the console so far: earlier kexecs do not count
        self.frozen_at = None
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            if re.search(r"Command line: .*bisectd\.boot=", self.lab.serial(self.name)[self.seen:]):
                self.lab.monitor(self.name, "stop")
                self.frozen_at = time.time()
                print(f"[{time.strftime('%H:%M:%S')}] fault: {self.name} frozen right after its kexec", flush=True)
                return
            time.sleep(0.1)


def boot_times(log):
    """Seconds from the kexec command to ssh answering with the new kernel, per kexec the daemon logged."""
    return [(m.group(1), float(m.group(2))) for m in re.finditer(r"ssh (box-\d): up on \S+ after ([0-9.]+)s", log)]


def check_box_monitors(env, commit):
    """The kernel job's system monitors were collected on the boxes (in each run's own ssh command) and stored as
    the samples' metrics; prints one box sample's monitor metrics as an example."""
    samples = [s for s in env.ctl_json("results", commit)["samples"] if s.get("machine") in BOXES]
    check(samples, f"no sample of {commit} from a box")
    monitored = [s for s in samples if any(n.startswith(("vmstat.", "softirqs.")) for n in s["metrics"])]
    check(monitored, f"no vmstat.* or softirqs.* metric on any box sample of {commit}: "
                     f"{sorted(samples[0]['metrics'])}")
    shown = env.ctl_json("results", commit, "--metric", "softirqs.*")["samples"]
    check(any(s["metrics"] for s in shown), "results --metric 'softirqs.*' shows no box metric")
    # The boxes carry Debian's perf (ssh-box.sh): each run's ssh command wraps the benchmark in the box's own perf.
    profiled = [s for s in samples if any(n.startswith("perf-stat.") for n in s["metrics"])
                and any(n.startswith("perf-profile.") for n in s["metrics"])]
    check(profiled, f"no perf-stat.* and perf-profile.* metrics on any box sample of {commit}: "
                    f"{sorted(samples[0]['metrics'])}")
    example = monitored[0]
    names = sorted(example["metrics"])
    families = sorted({n.split(".", 1)[0] for n in names})
    print(f"monitors: {len(monitored)} of {len(samples)} box samples of {commit[:12]} carry monitors, "
          f"{len(profiled)} perf; "
          f"{example['machine']}: {len(names)} metrics ({', '.join(families)})")
    for name in ("proc-vmstat.pgfault", "vmstat.system.cs", "vmstat.cpu.sy", "softirqs.TIMER",
                 "interrupts.LOC:Local_timer_interrupts", "meminfo.MemFree", "time.elapsed_time",
                 "time.user_time", "time.system_time", "time.minor_page_faults"):
        if name in example["metrics"]:
            print(f"  {name}: {example['metrics'][name]}")


def test(env):
    started = time.time()
    persistent_data_dir(env)
    repo, planted, base, head = kernel_series(env)

    artifacts, release = build_kernel(base)
    lab = Lab(os.path.join(env.dir, "lab"))
    try:
        lab.start(os.path.join(artifacts, "bzImage"))
        for name in BOXES:
            lab.wait_up(name, release, 300)
        print(f"boxes up on {release} after {time.time() - started:.0f}s", flush=True)
        hang = HangInjector(lab, HUNG)
        hang.start()

        job = write_test_job(env)
        text = open(job).read()
        check("machine_group: qemu\n" in text, "the kernel job has no 'machine_group: qemu'")
        with open(job, "w") as f:
            f.write(text.replace("machine_group: qemu\n", "machine_group: ssh-qemu\n"))
        env.start_smtp()
        env.start_daemon("--lab", lab.lab_file, cwd=lab.dir)
        env.ctl("tree", "add", "linux", repo, "--branch", "master", "--job", job, "--public")

        def baseline_done():
            progress(env, "baseline")
            return env.ctl_json("status")["queue"].get("done", 0) >= 1
        wait_for(baseline_done, 1800, "the base kernel was never measured on a box", interval=15)
        bisect_the_push(env, repo, head, planted, interval=15)

        # The fault: box-2 hung after a kexec, was power-cycled, its visit failed (no sample) and the work went on.
        hang.done.set()
        log = open(env.log_path).read()
        check(hang.frozen_at is not None, f"{HUNG} never kexec'd a kernel: no fault was injected")
        check(f"ssh {HUNG}: power cycling" in log, f"{HUNG} was never power-cycled")
        failed = [line for line in log.splitlines()
                  if re.search(rf"ssh {HUNG}: visit \S+ failed .*no ssh within \d+s of the kexec", line)]
        check(failed, f"no failed visit of {HUNG} for the missing ssh after its kexec")
        print("fault: " + failed[0].strip())
        check("power-cycled back to its default kernel" in failed[0], "the box did not come back from the power cycle")
        lab.wait_up(HUNG, release, 120)  # back on its default kernel, answering
        times = boot_times(log)
        check(times, "no kexec boot was logged")
        check(len({name for name, _ in times}) == 2, f"not both boxes booted kernels by kexec: {times}")
        seconds = sorted(t for _, t in times)
        print(f"timing: boot by kexec (kexec -e to ssh answering with the new uname -r): {len(seconds)} boots, "
              f"min {seconds[0]:.1f}s, median {seconds[len(seconds) // 2]:.1f}s, max {seconds[-1]:.1f}s")
        check_box_monitors(env, planted)
        print(f"timing: whole test {time.time() - started:.0f}s")
    finally:
        lab.stop()


if __name__ == "__main__":
    for program in ("qemu-system-x86_64", "dropbear", "kexec"):
        if shutil.which(program) is None and not os.path.exists("/usr/sbin/" + program):
            print(f"skipped: {program} not installed")
            sys.exit(SKIP)
    if not os.path.exists("/usr/src/linux-source-6.1.tar.xz") or not os.path.exists("/bin/busybox"):
        print("skipped: linux-source-6.1 or busybox-static not installed")
        sys.exit(SKIP)
    sys.exit(run("kernel.ssh_kexec", test))
