#!/usr/bin/env python3
"""A benchmark that prints garbage: one commit prints metric names and values that are not UTF-8, lines that are not
metrics and ~100 MB of junk with no primary metric; its neighbour prints non-UTF-8 metric names beside a valid
primary. The garbage visit fails with a one-line error and, after the second attempt that makes a failure a verdict
(issue 30), its commit is skipped (no retry loop), each visit's run log on disk is capped, the daemon's memory high-water mark stays bounded, the API keeps answering, the bisection ends."""
import json
import os
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_lib import BAD, GOOD, NORMAL_BENCH, dir_bytes, make_tree, query, vm_kib, write_job  # noqa: E402
from harness import check, run  # noqa: E402

JUNK_MB = 100
# Pure junk: names and values that are not UTF-8, lines that are not metrics, then ~100 MB without the primary.
GARBAGE_BENCH = f"""import sys
out = sys.stdout.buffer
out.write(b"\\xff\\xfe bench.\\xc0\\x80ops: 12\\n")
out.write(b"bench.ops_per_sec: \\xff\\xfe1000\\n")
out.write(b"this line is not a metric\\n::::\\n\\x00\\x01\\x02 binary: \\x00\\n")
line = (b"\\xfe\\xff junk: " * 64 + b"\\n") * 1024
for _ in range({JUNK_MB} * 1024 * 1024 // len(line)):
    out.write(line)
"""
# A valid primary among metric names that are not UTF-8: a sample is stored; every view of it must still answer.
LATIN1_BENCH = NORMAL_BENCH.format(mean=GOOD) + """import sys
sys.stdout.flush()
sys.stdout.buffer.write(b"caf\\xe9.latency_\\xb5s: 12.5\\nbench.\\xff\\xfe: 3\\n")
"""
# RSS bound (ASan build, quarantine capped): it idles near 136 MiB and peaks near 195-215 MiB on this tree; the
# uncapped 100 MB run log, read whole and split into lines, would add 200 MB more.
HWM_BOUND_KIB = 256 * 1024
LOG_BOUND = 8 * 1024 * 1024 + 4096  # the run log cap of one visit (lab/local_machine.cpp) and its note


def get(env, path):
    with urllib.request.urlopen(env.url + path, timeout=10) as r:
        return r.status, json.loads(r.read())


def test(env):
    # ASan holds freed memory in a quarantine (256 MB by default) that counts in VmHWM: keep it small, so the
    # high-water mark measures what the daemon holds, not what the sanitizer keeps of what it freed.
    if os.environ.get("ASAN_OPTIONS") is not None:
        os.environ["ASAN_OPTIONS"] += ":quarantine_size_mb=16"
    # 0-3 good, 4 non-UTF-8 names with a good primary, 5 garbage, 6 the regression, 7-9 bad.
    benches = [NORMAL_BENCH.format(mean=GOOD)] * 4 + [LATIN1_BENCH, GARBAGE_BENCH] + \
              [NORMAL_BENCH.format(mean=BAD)] * 4
    shas = make_tree(os.path.join(env.dir, "repo"), benches)
    job = write_job(os.path.join(env.dir, "job.yaml"), runs=3)
    env.start_daemon()
    pid = env.daemon.pid
    time.sleep(2)
    idle = vm_kib(pid, "VmHWM")
    env.ctl("tree", "add", "demo", os.path.join(env.dir, "repo"), "--branch", "master", "--job", job)
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas[0], "--bad", shas[-1]).stdout.strip()

    # The API must keep answering while the garbage is produced and parsed: poll it all along, time each answer.
    slowest = [0.0]
    failures = []
    done = threading.Event()

    def poll_api():
        while not done.is_set():
            start = time.time()
            try:
                status, _ = get(env, "/api/v1/status")
                if status != 200:
                    failures.append(status)
            except OSError as e:
                failures.append(str(e))
            slowest[0] = max(slowest[0], time.time() - start)
            time.sleep(0.5)
    poller = threading.Thread(target=poll_api)
    poller.start()
    started = time.time()
    try:
        r = env.ctl("wait", bid, "--timeout", "240", expect=None)
    finally:
        done.set()
        poller.join()
    elapsed = time.time() - started
    show = env.ctl_json("show", bid)
    print(f"garbage: bisection {show['state']} in {elapsed:.0f}s, culprit {show['culprit']}, "
          f"API slowest answer {slowest[0]:.2f}s")
    check(show["state"] in ("found", "not_found", "failed"), f"the bisection did not end: {show['state']} {r.stderr}")
    check(not failures, f"the API failed to answer during the garbage: {failures[:5]}")

    rows = query(env, "SELECT id, state, attempts, error FROM requests WHERE commit_sha = ?", shas[5])
    check(rows, "the garbage commit was never visited")
    for rid, state, attempts, error in rows:
        print(f"garbage: request {rid}: {state}, {attempts} attempt(s): {error}")
        check(state == "failed" and error and "\n" not in error, f"request {rid}: {state}, error {error!r}")
        check("bench.ops_per_sec" in error, f"the error does not name the missing metric: {error!r}")
        check(attempts <= 3, f"request {rid} was tried {attempts} times")
        size = dir_bytes(os.path.join(env.data, "logs", f"request-{rid}"))
        print(f"garbage: request {rid}: run logs {size / 2**20:.1f} MiB on disk")
        check(size <= LOG_BOUND * attempts, f"request {rid}'s run logs take {size} bytes (cap {LOG_BOUND} a visit, "
                                            f"{attempts} visits)")
    flags = query(env, "SELECT flag, message FROM commit_flags WHERE commit_sha = ?", shas[5])
    check(flags, "the garbage commit is not flagged skipped")
    tested = {t["commit"]: t["status"] for t in show["tested"]}
    check(tested.get(shas[5]) == "skipped", f"the garbage commit is shown as {tested.get(shas[5])}")
    if show["state"] == "found":
        check(show["culprit"] in (shas[5], shas[6]), f"culprit {show['culprit']} is neither the garbage commit "
                                                      f"nor the regression {shas[6]}")

    # Non-UTF-8 metric names stored with a valid sample: the views answer, with replacement characters.
    if query(env, "SELECT 1 FROM samples WHERE commit_sha = ?", shas[4]):
        status, results = get(env, f"/api/v1/results/{shas[4]}?tree=demo")
        names = set().union(*(s["metrics"].keys() for s in results["samples"]))
        check(status == 200 and "bench.ops_per_sec" in names, f"results of the non-UTF-8 commit: {results}")
        print(f"garbage: non-UTF-8 metric names shown as {sorted(n for n in names if n != 'bench.ops_per_sec')}")
    check(get(env, f"/api/v1/bisections/{bid}")[0] == 200, "the bisection's view no longer answers")

    hwm = vm_kib(pid, "VmHWM")
    print(f"garbage: bisectd VmHWM {hwm / 1024:.0f} MiB, {idle / 1024:.0f} MiB after start-up "
          f"(bound {HWM_BOUND_KIB / 1024:.0f} MiB)")
    check(hwm <= HWM_BOUND_KIB, f"bisectd's VmHWM reached {hwm} KiB")


if __name__ == "__main__":
    sys.exit(run("faults-garbage", test))
