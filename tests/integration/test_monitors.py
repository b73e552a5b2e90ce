#!/usr/bin/env python3
"""A userspace job with `monitors: [proc-vmstat, time]` on the `local` machine: the watcher's runs of the head carry
proc-vmstat.* and time.* metrics next to the benchmark's own, as `bisectctl results --json` shows; a job without
`monitors:` gets none; an unknown monitor is a one-line `file:line: monitors:` error."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, git, make_repo, one_line_error, run, wait_for, write_job  # noqa: E402


def head_samples(env, repo, tree):
    head = git(repo, "rev-parse", "master")
    return env.ctl_json("results", head, "--tree", tree)["samples"]


def test(env):
    repo = os.path.join(env.dir, "repo")
    make_repo(repo, "--commits", "4")
    env.start_daemon()

    bad = write_job(os.path.join(env.dir, "bad.yaml"), extra="monitors: [proc-vmstat, turbostat]\n")
    r = env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", bad, expect=1)
    one_line_error(r, "bad.yaml:6:", "monitors:", "turbostat")

    job = write_job(os.path.join(env.dir, "job.yaml"), runs=2, extra="monitors: [proc-vmstat, time]\n")
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    plain = write_job(os.path.join(env.dir, "plain.yaml"), name="plain", runs=2)
    env.ctl("tree", "add", "plain", repo, "--branch", "master", "--job", plain)
    wait_for(lambda: len(head_samples(env, repo, "demo")) >= 2 and len(head_samples(env, repo, "plain")) >= 2, 600,
             "the watcher did not measure the head of both trees")

    samples = head_samples(env, repo, "demo")
    for s in samples:
        metrics = s["metrics"]
        names = sorted(metrics)
        check(metrics.get("bench.ops_per_sec", 0) > 0, f"the benchmark's metric is missing: {names}")
        for name in ("time.elapsed_time", "time.user_time", "time.system_time", "time.minor_page_faults",
                     "time.voluntary_context_switches", "time.involuntary_context_switches",
                     "time.major_page_faults", "time.percent_of_cpu_this_job_got", "proc-vmstat.pgfault"):
            check(name in metrics, f"{name} missing from a sample: {names}")
        # ./bench --seconds 0.3 runs for about 0.3 s of wall time, and the host's page faults include its own.
        check(0.25 <= metrics["time.elapsed_time"] < 30, f"time.elapsed_time {metrics['time.elapsed_time']}")
        check(metrics["proc-vmstat.pgfault"] >= metrics["time.minor_page_faults"] > 0,
              f"pgfault {metrics['proc-vmstat.pgfault']} < the run's own {metrics['time.minor_page_faults']}")
        others = [n for n in names if not n.startswith(("bench.", "time.", "proc-vmstat."))]
        check(not others, f"metrics of monitors the job did not ask for: {others}")
    print(f"monitors: {len(samples)} samples, e.g. time.elapsed_time {samples[0]['metrics']['time.elapsed_time']:.3f}"
          f" proc-vmstat.pgfault {samples[0]['metrics']['proc-vmstat.pgfault']:.0f}"
          f" ({len(samples[0]['metrics'])} metrics)")

    for s in head_samples(env, repo, "plain"):
        monitored = [n for n in s["metrics"] if n.startswith(("time.", "proc-vmstat."))]
        check(not monitored, f"a job without monitors got {monitored}")


if __name__ == "__main__":
    sys.exit(run("monitors", test))
