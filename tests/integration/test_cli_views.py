#!/usr/bin/env python3
"""What a user reads through bisectctl (issue #30, items 4 and 5), on a tree whose benchmark gives the same number on
every commit (0.2 % noise) and whose side branch `broken` does not compile:
- a bisection over the flat history ends with `no_change`: `show` says "no change beyond the threshold (±5%: the
  most likely shift is within [a, b])" instead of a list of candidate shas, lists every request with its id, and
  `report` says why there is no mail;
- a bisection whose bad end does not compile fails; `logs build SHA --tree demo` (and a ref, and a sha prefix)
  prints the compiler's error by commit, without a request id; `report` says the bisection failed;
- `jobs` lists each job with the tree using it;
- `queue` lists a watch request that is building (a second tree whose build sleeps), with tree, job, commit,
  purpose, machine, state and age, in text and in --json, and the requests of a bisection waiting behind it, whose
  `report` says it is still running."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from harness import check, one_line_error, run, wait_for, write_job  # noqa: E402
from make_demo_repo import commit, git, write  # noqa: E402

# The same modelled rate on every commit, 0.2 % noise: the search can only conclude that nothing changed.
BENCH_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  srand((unsigned)now.tv_nsec ^ (unsigned)getpid() << 8);
  printf("bench.ops_per_sec: %.2f\n", 1000.0 * (1 + ((double)rand() / RAND_MAX - 0.5) * 0.004));
  return 0;
}
'''
MAKEFILE = "bench: bench.c\n\t$(CC) -O1 -o bench bench.c\n"
COMPILER_ERROR_MARK = "broken_on_purpose"


def make_tree(dest):
    """base, three note commits on master; on branch `broken`, a commit whose bench.c does not compile."""
    os.makedirs(dest)
    git(dest, "init", "-q", "-b", "master")
    write(dest, "bench.c", BENCH_C)
    write(dest, "Makefile", MAKEFILE)
    write(dest, "NOTES", "flat\n")
    shas = {"base": commit(dest, 0, "bench: a flat benchmark")}
    for i in range(1, 4):
        write(dest, "NOTES", f"flat\nnote {i}\n")
        shas["head"] = commit(dest, i, f"notes: note {i}")
    git(dest, "checkout", "-q", "-b", "broken")
    write(dest, "bench.c", BENCH_C.replace("return 0;", f"return {COMPILER_ERROR_MARK}"))
    shas["broken"] = commit(dest, 4, "bench: does not compile")
    git(dest, "checkout", "-q", "master")
    return shas


def request_rows(text):
    """The rows of show's requests table: id -> the row's words."""
    rows = {}
    table = text.split("requests (`bisectctl logs build|request|console ID`):\n", 1)
    check(len(table) == 2, f"show prints no requests table:\n{text}")
    for line in table[1].splitlines()[1:]:
        if not line.strip():
            break
        words = line.split()
        if words and words[0].isdigit():
            rows[int(words[0])] = words
    return rows


def check_no_change(env, shas):
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["base"], "--bad", shas["head"]).stdout.strip()
    started = time.monotonic()
    waited = env.ctl("wait", bid, "--timeout", "240", expect=None)
    show = env.ctl_json("show", bid)
    print(f"no-change bisection {bid}: {show['state']}/{show['verdict']} in {time.monotonic() - started:.0f}s, "
          f"{show['runs']} runs, {len(show['requests'])} requests, shift {show['shift']}")
    check(show["state"] == "not_found" and show["verdict"] == "no_change", f"not a no_change verdict: {show}")
    text = env.ctl("show", bid).stdout
    check(re.search(r"^verdict +no change beyond the threshold \(±5%: the most likely shift is within "
                    r"\[[-+]\d+\.\d%, [-+]\d+\.\d%\]\)$", text, re.M), f"show's verdict line:\n{text}")
    check("could be any of" not in text, f"a no_change reads like an unfinished search:\n{text}")
    said = f"bisection {bid} ended not_found: no change beyond the threshold"
    check(waited.returncode == 1 and said in waited.stderr, f"wait: exit {waited.returncode}, {waited.stderr[-300:]}")
    rows = request_rows(text)
    for r in show["requests"]:
        row = rows.get(r["id"])
        check(row is not None and row[1] == r["commit"][:10] and row[2] == r["purpose"],
              f"request {r['id']} ({r['commit'][:10]} {r['purpose']}) is not in show's table: {rows}")
    check(len(rows) == len(show["requests"]) > 0, f"show lists {len(rows)} requests, the API {len(show['requests'])}")
    one_line_error(env.ctl("report", bid, expect=1), "no change beyond the threshold", "no report")


def check_build_log_by_commit(env, shas):
    bid = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["head"], "--bad", shas["broken"]).stdout.strip()
    env.ctl("wait", bid, "--timeout", "120", expect=None)
    show = env.ctl_json("show", bid)
    check(show["state"] == "failed", f"a bisection whose bad end does not compile: {show['state']}")
    for rev in (shas["broken"], shas["broken"][:9], "broken"):
        log = env.ctl("logs", "build", rev, "--tree", "demo")
        check(COMPILER_ERROR_MARK in log.stdout and "error" in log.stdout,
              f"logs build {rev} --tree demo has no compiler error:\n{log.stdout[-800:]}\n{log.stderr}")
    one_line_error(env.ctl("logs", "build", shas["base"], "--tree", "demo", "--job", "no-such-job", expect=1),
                   "no build of", "no-such-job")
    one_line_error(env.ctl("report", bid, expect=1), f"bisection {bid} failed")


def check_queue_and_jobs(env, repo, shas):
    slow = write_job(os.path.join(env.dir, "slow.yaml"), name="slow-build")
    with open(slow) as f:
        text = f.read().replace("command: [make, bench]", 'command: [sh, -c, "sleep 100; make bench"]')
    with open(slow, "w") as f:
        f.write(text)
    env.ctl("tree", "add", "slow", repo, "--branch", "master", "--job", slow)
    row = []

    def building():
        for line in env.ctl("queue").stdout.splitlines():
            if " slow " in f" {line} " and "building" in line:
                row[:] = line.split()
                return True
        return False
    wait_for(building, 60, "queue never listed the slow tree's watch request building: " + env.ctl("queue").stdout)
    # ID TREE JOB COMMIT PURPOSE FOR MACHINE STATE AGE
    machine = env.ctl_json("machines")["machines"][0]["name"]  # the one local machine
    check(row[1:8] == ["slow", "slow-build", shas["head"][:10], "watch", "-", machine, "building"] and
          re.fullmatch(r"\d+[smh]", row[8]), f"queue row: {row}")
    listed = env.ctl_json("queue")["requests"]
    check(any(r["tree"] == "slow" and r["purpose"] == "watch" and r["commit"] == shas["head"] for r in listed),
          f"queue --json: {listed}")
    # A bisection on the slow tree waits behind that build (100 s): still running, its requests in the queue.
    bid = env.ctl("bisect", "start", "--tree", "slow", "--good", shas["base"], "--bad", shas["head"]).stdout.strip()
    one_line_error(env.ctl("report", bid, expect=1), f"bisection {bid} is still running")
    wait_for(lambda: f"bisection {bid}" in env.ctl("queue").stdout, 30,
             "queue never listed the running bisection's requests: " + env.ctl("queue").stdout)
    jobs = env.ctl("jobs").stdout
    check(re.search(r"^demo-throughput +bench\.ops_per_sec +higher_is_better +±5% +demo$", jobs, re.M) and
          re.search(r"^slow-build +bench\.ops_per_sec +higher_is_better +±5% +slow$", jobs, re.M), f"jobs:\n{jobs}")
    by_name = {j["name"]: j["trees"] for j in env.ctl_json("jobs")["jobs"]}
    check(by_name == {"demo-throughput": ["demo"], "slow-build": ["slow"]}, f"jobs --json trees: {by_name}")


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_tree(repo)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_daemon()
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
    wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 120, "the head was never measured")
    check_no_change(env, shas)
    check_build_log_by_commit(env, shas)
    check_queue_and_jobs(env, repo, shas)


if __name__ == "__main__":
    sys.exit(run("cli_views", test))
