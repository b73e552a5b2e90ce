#!/usr/bin/env python3
"""Generates the small C projects of test_verify.py (modelled on scripts/lib/make_demo_repo.py).

The benchmark models its cost instead of timing it (this machine is shared, a timed 0.2 s run is too noisy
for a test): bench.ops_per_sec = 1e7 / WORK_ROUNDS with 0.5% random noise per run. WORK_ROUNDS is computed
by the preprocessor from the code in work.h, so the number depends only on what was compiled.

Scenario "layout": a commit only moves the hot loop (HOT_OFFSET 0 → 16). Unless the build forces alignment
(-DFORCE_ALIGN, the role of CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B), a misaligned hot loop costs 20% more
rounds; with it, both builds are identical in behaviour.
Scenario "comment": a comment-only commit sits right before the real culprit (WORK_ROUNDS 200 → 240).

Scenario "conflict": "layout", plus a later commit rewording the culprit's line, so its revert conflicts.

Usage: verify_repo.py DEST layout|conflict|comment   → prints {"base", "culprit", "comment", "head"} as JSON.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
from make_demo_repo import commit, git, write  # noqa: E402

BENCH_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "work.h"

int main(void) {
  /* Nanoseconds, not the pid: in a sandbox's pid namespace every run has the same pid. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  srand((unsigned)now.tv_sec ^ (unsigned)now.tv_nsec ^ (unsigned)getpid() << 8);
  double noise = ((double)rand() / RAND_MAX - 0.5) * 0.01; /* +-0.5% run to run */
  printf("bench.ops_per_sec: %.1f\n", 1e7 / WORK_ROUNDS * (1 + noise));
  printf("bench.rounds: %d\n", WORK_ROUNDS);
  return 0;
}
'''

MAKEFILE = '''CFLAGS ?= -O2
.PHONY: bench
bench:
\t$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -o bench bench.c
'''


def work_h(offset, rounds=200, comment="the cost model of one operation", unit="bytes"):
    return f'''/* {comment} */
#define HOT_OFFSET {offset} /* {unit} between the function start and the hot loop */
#ifdef FORCE_ALIGN
#define EFFECTIVE_OFFSET 0 /* forced alignment puts every hot loop on a 64-byte boundary */
#else
#define EFFECTIVE_OFFSET (HOT_OFFSET % 64)
#endif
#define WORK_ROUNDS ({rounds} + (EFFECTIVE_OFFSET ? {rounds} / 5 : 0))
'''


def note(dest, n, i):
    with open(os.path.join(dest, "NOTES"), "a") as f:
        f.write(f"note {i}\n")
    return commit(dest, n, f"notes: add note {i}")


def main():
    dest, scenario = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(dest, exist_ok=True)
    git(dest, "init", "-q", "-b", "master")
    write(dest, "bench.c", BENCH_C)
    write(dest, "Makefile", MAKEFILE)
    write(dest, "work.h", work_h(0))
    write(dest, "NOTES", "verify test project\n")
    shas = {"base": commit(dest, 0, "bench: initial benchmark")}
    for i in range(1, 9):
        if scenario in ("layout", "conflict") and i == 5:
            write(dest, "work.h", work_h(16))
            shas["culprit"] = commit(dest, i, "bench: move the hot loop by 16 bytes",
                                     "Signed-off-by: Lee Layout <lee@example.org>", ("Lee Layout", "lee@example.org"))
        elif scenario == "conflict" and i == 7:
            write(dest, "work.h", work_h(16, unit="octets"))  # touches the culprit's line: its revert conflicts
            commit(dest, i, "bench: say octets")
        elif scenario == "comment" and i == 4:
            write(dest, "work.h", work_h(0, comment="the cost model of one operation (see NOTES)"))
            shas["comment"] = commit(dest, i, "work: reword a comment",
                                     "Signed-off-by: Carl Comment <carl@example.org>", ("Carl Comment", "carl@example.org"))
        elif scenario == "comment" and i == 5:
            write(dest, "work.h", work_h(0, rounds=240, comment="the cost model of one operation (see NOTES)"))
            shas["culprit"] = commit(dest, i, "work: do more rounds per operation",
                                     "Signed-off-by: Rita Regress <rita@example.org>", ("Rita Regress", "rita@example.org"))
        else:
            note(dest, i, i)
    shas["head"] = git(dest, "rev-parse", "HEAD")
    json.dump(shas, sys.stdout)
    print()


if __name__ == "__main__":
    main()
