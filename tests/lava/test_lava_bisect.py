#!/usr/bin/env python3
"""The kernel scenario of tests/integration/test_kernel_bisect.py with every lab machine a LAVA device type: bisectd
submits one LAVA job per visit to the real LAVA that tests/lava/lava-test.sh started (LAVA_URL, LAVA_TOKEN_FILE,
LAVA_CALLBACK_SECRET_FILE). Besides the culprit and its mail it checks:
  - the first visit runs with a bad artifact URL: its job ends Incomplete and the request is retried as infra;
  - bisectd killed with SIGKILL while a LAVA job runs, then restarted: that job is followed to its end, not
    submitted again (jobs counted on the LAVA side);
  - LAVA's notify callback reaches bisectd (token-checked).
The job goes without perf (lava-test.sh's visit checks perf on LAVA): with it every job's ramdisk carries the 11 MB
perf archive and each run a profile, and the bisection took 442 s here against 210 s without.
Shares the kernel test's data dir (build dirs are tied to the worktree's path), so run after the kernel tests."""
import json
import os
import re
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
from harness import check, run, wait_for  # noqa: E402
from test_kernel_bisect import bisect_the_push, kernel_series, persistent_data_dir, progress, write_test_job  # noqa: E402

LAVA_URL = os.environ.get("LAVA_URL", "http://127.0.0.1:8000")


def lava_get(path):
    token = open(os.environ["LAVA_TOKEN_FILE"]).read().strip()
    request = urllib.request.Request(f"{LAVA_URL}/api/v0.2/{path}", headers={"Authorization": f"Token {token}"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.load(r)


def jobs_on_lava():
    return lava_get("jobs/?limit=1")["count"]


def write_lab(env, artifact_url):
    settings = {
        "url": LAVA_URL, "token_file": os.environ["LAVA_TOKEN_FILE"], "device_type": "qemu",
        "timeouts": {"queue": "600s", "unreachable": "120s"},
        "callback": {"url": f"http://127.0.0.1:{env.port}/lava/notify", "token": "bisectd-callback",
                     "secret_file": os.environ["LAVA_CALLBACK_SECRET_FILE"]},
        "artifact_url": artifact_url, "publish_dir": os.path.join(env.dir, "published"),
    }
    machine = {"name": "lava-qemu", "group": "qemu", "backend": "lava", "cpus": 1, "memory_mb": 256,
               "description": "LAVA device type qemu (QEMU TCG x86_64, 1 thread, 256M)", "settings": settings}
    path = os.path.join(env.dir, "lava-lab.yaml")
    with open(path, "w") as f:
        json.dump({"machines": [machine]}, f)  # JSON is YAML
    return path


def log_has(env, pattern):
    with open(env.log_path) as f:
        return re.search(pattern, f.read(), re.M)


def test(env):
    persistent_data_dir(env)
    os.makedirs(os.path.join(env.dir, "published"), exist_ok=True)
    repo, planted, _, head = kernel_series(env)
    env.start_smtp()
    first_job = jobs_on_lava()

    # 1. A bad artifact URL: the base commit's first visit ends Incomplete on LAVA and is retried as infra.
    # A 404 from LAVA's own server: LAVA's validation fails at once (a closed port takes ~9 minutes of retries).
    env.start_daemon("--lab", write_lab(env, LAVA_URL + "/no-such-artifacts"))
    env.ctl("tree", "add", "linux", repo, "--branch", "master", "--job", write_test_job(env, revert=False, perf=False),
            "--public")  # mail the author

    def infra_seen():
        progress(env, "bad artifact URL")
        return log_has(env, r"request 1 .*: infra: .*LAVA job \d+")
    wait_for(infra_seen, 3600, "the visit with a bad artifact URL was not an infra failure", interval=10)
    check(jobs_on_lava() == first_job + 1, "the bad-URL visit was not exactly one LAVA job")
    env.kill_daemon()

    # 2. The retry with good URLs (published by bisectd under an unguessable path); SIGKILL while its job runs.
    env.start_daemon("--lab", write_lab(env, f"http://127.0.0.1:{env.port}/lava/artifacts"))

    def running_on_lava():
        progress(env, "retry")
        jobs = lava_get("jobs/?state=Running&limit=10")["results"]
        return jobs[0]["id"] if jobs else None
    wait_for(running_on_lava, 1800, "the retried visit never ran on LAVA", interval=2)
    job_id = running_on_lava()
    submitted = jobs_on_lava()
    env.kill_daemon()
    env.start_daemon("--lab", write_lab(env, f"http://127.0.0.1:{env.port}/lava/artifacts"))

    def baseline_done():
        progress(env, "baseline (followed after SIGKILL)")
        return env.ctl_json("status")["queue"].get("done", 0) >= 1
    wait_for(baseline_done, 1800, "the base kernel was never measured on LAVA", interval=5)
    check(log_has(env, rf"following LAVA job {job_id} again"), f"LAVA job {job_id} was not followed after the restart")
    check(jobs_on_lava() == submitted, "the job in flight at the SIGKILL was submitted again")
    check(log_has(env, rf"LAVA job {job_id}.*Finished"), "the followed job did not finish")

    # 3. The push, the detection and the bisection, all on LAVA.
    bisect_the_push(env, repo, head, planted, open_timeout=3600, finish_timeout=5400, interval=30)
    print(f"LAVA jobs for the whole scenario: {jobs_on_lava() - first_job}")


if __name__ == "__main__":
    sys.exit(run("lava_bisect", test))
