#!/usr/bin/env python3
"""Whole bisections through the real daemon under wild noise (issue #31's lab): generated trees of COMMITS commits
with a side branch merged with --no-ff and one commit that does not build, the benchmark's result passed through
integration.merge_outliers' noise wrapper (gaussian at sigma = 3.64 %, so the planted 9.1 % drop is d = 2.5, and 5 %
of runs 5 to 10 sigma away, either side), each bisection started by hand (`bisectctl bisect start`: no alert, no
shift known). Trials alternate the culprit between the mainline and the side branch; positions come from the seed.
Prints one row per bisection (runs including verification, right or not) and a summary.

Usage: BISECTD_BIN_DIR=build/test/bin bench/daemon-noise/run.py [--trials 20] [--seed 31] [--commits 84]
                                                               [--jobs 2]
"""
import argparse
import json
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
from harness import Env, check, make_repo, wait_for  # noqa: E402
import test_merge_outliers  # noqa: E402

MAX_RUNS = 150   # issue #31: each bisection at most this many runs, verification included
MEAN_RUNS = 100  # and at most this many on average


def trial_args(rng, commits, side):
    """make_demo_repo arguments: the merge, the broken commit and (on the mainline) the culprit apart."""
    merge = rng.randint(10, commits - 10)
    taken = {merge, merge + 1}
    broken = rng.choice([i for i in range(3, commits - 2) if i not in taken and i + 1 not in taken])
    taken |= {broken, broken + 1}
    args = ["--commits", str(commits), "--merge-at", str(merge), "--broken-at", str(broken),
            "--regression", str(test_merge_outliers.REGRESSION)]
    if side:
        return args + ["--regress-on-side"]
    culprit = rng.choice([i for i in range(2, commits) if i not in taken])
    return args + ["--regress-at", str(culprit)]


def one_bisection(k, args, side):
    env = Env(f"noise{k}")
    row = {"trial": k, "where": "side" if side else "mainline", "args": " ".join(args)}
    try:
        repo = os.path.join(env.dir, "repo")
        shas = make_repo(repo, *args)
        job = test_merge_outliers.write_noisy_job(env)
        config = os.path.join(env.dir, "unsandboxed.yaml")
        with open(config, "w") as f:
            f.write("sandbox: none\n")
        env.start_daemon("--config", config)
        env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", job)
        wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= 1, 300, "the head was never measured")
        started = time.monotonic()
        out = env.ctl("bisect", "start", "--tree", "demo", "--good", shas["base"], "--bad", shas["head"],
                      "--json").stdout
        bid = str(json.loads(out)["id"])
        env.ctl("wait", bid, "--timeout", "1800", expect=None)
        show = env.ctl_json("show", bid)
        row.update(state=show["state"], runs=show["runs"], reused=show["runs_reused"], builds=show["builds"],
                   right=show["state"] == "found" and show["culprit"] == shas["culprit"],
                   seconds=round(time.monotonic() - started))
        check(row["right"], f"trial {k}: {show['state']} {show.get('culprit')} != {shas['culprit']}")
        env.ok = True
    except Exception as e:  # noqa: BLE001 - a failed trial is a row of the table, with its error
        row.setdefault("right", False)
        row["error"] = str(e)[:300]
    finally:
        env.close()
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--commits", type=int, default=84)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    rng = random.Random(a.seed)
    plans = [(k, trial_args(rng, a.commits, k % 2 == 1), k % 2 == 1) for k in range(a.trials)]
    rows, lock = [], threading.Lock()

    def worker():
        while True:
            with lock:
                if not plans:
                    return
                k, args, side = plans.pop(0)
            row = one_bisection(k, args, side)
            with lock:
                rows.append(row)
                print(json.dumps(row), flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, a.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows.sort(key=lambda r: r["trial"])
    print("\n| trial | culprit | state | runs (verification included) | reused | builds | right | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['trial']} | {r['where']} | {r.get('state', 'error')} | {r.get('runs', '-')} | "
              f"{r.get('reused', '-')} | {r.get('builds', '-')} | {'yes' if r['right'] else 'NO'} | "
              f"{r.get('seconds', '-')} |")
    runs = [r["runs"] for r in rows if "runs" in r]
    right = sum(1 for r in rows if r["right"])
    mean = sum(runs) / len(runs) if runs else float("nan")
    print(f"\n{right} of {len(rows)} named the culprit; runs mean {mean:.1f}, max {max(runs) if runs else '-'} "
          f"(targets: every one right, each <= {MAX_RUNS}, mean <= {MEAN_RUNS})")
    met = right == len(rows) and runs and max(runs) <= MAX_RUNS and mean <= MEAN_RUNS
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
