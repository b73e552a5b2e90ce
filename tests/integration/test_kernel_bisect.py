#!/usr/bin/env python3
"""The kernel scenario end to end through bisectd: a git tree made from Debian's linux-source-6.1 with a series
of small commits, one of which slows the page-fault path; the QEMU lab (TCG here) builds and boots candidates;
the watcher detects the shift after a push and the bisection must name the planted commit.
Slow (label `kernel`): a cold tinyconfig build takes 5-17 minutes here; build dirs and ccache are cached under
${XDG_CACHE_HOME:-~/.cache}/bisectd so a rerun is mostly incremental."""
import email
import email.policy
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, SOURCE, check, git, run, wait_for  # noqa: E402


def progress(env, what):
    print(f"[{time.strftime('%H:%M:%S')}] {what}: {env.log_tail(1).strip()}", flush=True)


def bisect_the_push(env, repo, head, planted, open_timeout=1800, finish_timeout=3600, interval=20):
    """Pushes the series' head, waits for the watcher's bisection to finish, checks that it found the planted
    commit and mailed it; returns `show --json` of that bisection."""
    git(repo, "update-ref", "refs/heads/master", head)

    def opened():
        progress(env, "detect")
        return env.ctl_json("bisections")["bisections"]
    wait_for(opened, open_timeout, "no bisection opened after the push", interval=interval)
    bid = str(env.ctl_json("bisections")["bisections"][0]["id"])

    def finished():
        progress(env, "bisect")
        return env.ctl_json("show", bid)["state"] != "running"
    wait_for(finished, finish_timeout, "the bisection did not finish", interval=interval)
    show = env.ctl_json("show", bid)
    print(env.ctl("show", bid).stdout)
    check(show["state"] == "found", f"state {show['state']}: {show.get('error')}")
    check(show["culprit"] == planted, f"culprit {show['culprit']} != planted {planted}")
    wait_for(lambda: len(env.mails()) >= 1, 120, "no mail arrived")
    check(planted[:10] in env.mails()[0][0], "the mail does not name the planted commit")
    return show


def check_evidence(env, show, perf):
    """The report carries what the kernel did, collected in the QEMU guests. Which monitor rows are significant
    depends on the runs (a -50% shift moved proc-vmstat.* in one run and not in the next), so the checks are on what
    was collected: proc-vmstat.* (and with perf, perf-stat.* and perf-profile.*) on the runs of both the culprit and
    its parent, no monitor listed as unavailable in the mail (`time` included: the guest's /init reads its own
    /proc/self/stat around the benchmark); and, with perf, the one row the planted commit decides: the self time of
    the function it adds (absent on the parent)."""
    mail = email.message_from_string(env.mails()[0][0], policy=email.policy.default)
    body = mail.get_body(preferencelist=("plain",)).get_content()
    print("mail: " + ", ".join(re.findall(r"\b(?:proc-vmstat|perf-stat|perf-profile)\.\S+", body)[:12]))
    unavailable = re.search(r"^unavailable monitors: (.*) \(", body, re.M)
    missing = set(unavailable.group(1).split(", ")) if unavailable else set()
    check(not missing, f"the mail lists unavailable monitors: {sorted(missing)}")
    families = ["proc-vmstat"] + (["perf-stat", "perf-profile"] if perf else [])
    compared = show["compared"]  # the parent's runs are filed under same_binary_as when it shares that binary
    measured_parent = compared["same_binary_as"] or compared["parent"]
    for commit in (compared["culprit"]["commit"], measured_parent["commit"]):
        for family in families:
            samples = env.ctl_json("results", commit, "--metric", f"{family}.*")["samples"]
            carrying = [s for s in samples if s["metrics"]]
            check(carrying, f"no {family}.* metric on any run of {commit[:12]}")
            print(f"{commit[:12]}: {family}.* on {len(carrying)} of {len(samples)} runs")
    if perf:
        check("perf-profile.self.cycles-pp.mm_account_fault_locality" in body,
              "the mail has no perf-profile row for mm_account_fault_locality")


def persistent_data_dir(env):
    """Kernel build dirs are tied to the worktree's absolute path (kbuild records it): a fresh data dir would mean
    a cold 5-17 minute build every run. Keep the data dir under the cache, but start from an empty database."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    env.data = os.path.join(cache, "bisectd", "kernel-e2e")
    os.makedirs(env.data, exist_ok=True)
    for name in os.listdir(env.data):
        if name.startswith("bisectd.db") or name in ("token", "mirrors", "logs"):
            path = os.path.join(env.data, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def write_test_job(env, revert=True, perf=True):
    """The demo's kernel job without the code-layout rebuild: forcing function alignment changes every object, so
    that check costs a second cold kernel build (12-15 minutes here) and CI has 90 minutes for everything.
    `scripts/demo` keeps it (its report shows the layout line). revert=False also leaves out the revert check (16
    more visits) for a lab whose visits are dear and whose revert path is the same code the QEMU test covers;
    perf=False leaves out perf (every visit then boots without the 11 MB perf archive and runs without profiling)."""
    configs = os.path.join(SOURCE, "configs")
    text = open(os.path.join(configs, "jobs", "kbench-page-fault.yaml")).read()
    text = text.replace("../kconfig/qemu-x86_64.config", os.path.join(configs, "kconfig", "qemu-x86_64.config"))
    path = os.path.join(env.dir, "kbench-page-fault.yaml")
    with open(path, "w") as f:
        f.write(text + f"verify: {{layout: false, revert: {'true' if revert else 'false'}}}\n")
        if not perf:
            f.write("perf: {stat: false, profile: false}\n")
    return path


def kernel_series(env):
    """The demo kernel tree (scripts/make-kernel-tree) with master moved back to its base: the push of the series
    is the test's to make. Returns (repo, planted, base, head)."""
    repo = os.path.join(env.dir, "linux.git")
    subprocess.run([os.path.join(SOURCE, "scripts", "make-kernel-tree"), repo], check=True, stdout=subprocess.DEVNULL)
    planted = open(os.path.join(repo, ".bisectd-planted")).read().strip()
    base = open(os.path.join(repo, ".bisectd-base")).read().strip()
    head = git(repo, "rev-parse", "master")
    git(repo, "update-ref", "refs/heads/master", base)
    return repo, planted, base, head


def test(env):
    # perf in every guest doubles this test's time (the 11 MB perf archive in each boot, two `perf report` passes
    # per run under TCG), and the revert check adds a kernel build and 8 visits (80 s warm): CI runs it without both
    # (kernel.bisect; perf in the guest is proven by kernel.build_boot and the visit tests, the revert check by
    # integration.verify), `scripts/test --full` with (full.kernel_bisect_perf: the perf rows reach the mail, the
    # reverted kernel comes back).
    full = os.environ.get("BISECTD_KERNEL_BISECT_FULL") == "1"
    persistent_data_dir(env)
    repo, planted, _, head = kernel_series(env)

    env.start_smtp()
    env.start_daemon("--lab", os.path.join(SOURCE, "configs", "lab", "qemu.yaml"))
    env.ctl("tree", "add", "linux", repo, "--branch", "master", "--job", write_test_job(env, revert=full, perf=full),
            "--public")  # mail the author

    def baseline_done():
        progress(env, "baseline")
        return env.ctl_json("status")["queue"].get("done", 0) >= 1
    wait_for(baseline_done, 3600, "the base kernel was never built, booted and measured", interval=30)

    show = bisect_the_push(env, repo, head, planted)
    check_evidence(env, show, full)
    if full:
        check("comes back" in show["verification"].get("revert", ""), f"revert: {show['verification'].get('revert')}")
    # Documentation, networking, sound, USB, DRM, ext4 and e1000 commits are not in a tinyconfig QEMU kernel.
    relevance = [e["message"] for e in show["events"] if "touch no file the kernel build uses" in e["message"]]
    check(relevance, "no commit was left out as irrelevant to the kernel build")
    print(relevance[0])


if __name__ == "__main__":
    for program in ("qemu-system-x86_64", "busybox"):
        if shutil.which(program) is None and not os.path.exists("/bin/" + program):
            print(f"skipped: {program} not installed")
            sys.exit(SKIP)
    if not os.path.exists("/usr/src/linux-source-6.1.tar.xz"):
        print("skipped: linux-source-6.1 not installed")
        sys.exit(SKIP)
    sys.exit(run("kernel_bisect", test))
