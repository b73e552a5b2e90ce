#!/usr/bin/env python3
"""Generates the userspace demo tree: a small C benchmark with a planted throughput regression.

History (first-parent, fixed dates so shas are reproducible):
  base commit, then N small commits; one commit does not build (fixed by the next); a side branch of
  three commits is merged with --no-ff; one commit makes the benchmark ~REGRESSION% slower.
Prints a JSON summary (shas of the planted commits) on stdout.

Usage: make_demo_repo.py DEST [--commits 40] [--regress-at 27] [--broken-at 12] [--merge-at 18]
                         [--regression 30] [--split-at K] [--regress-on-side]   (K: branch 'master' stops at commit K; the rest
                                                             goes to branch 'next' for a later push)
       --regress-on-side: the slower commit is the side branch's second commit instead (merge recursion)
"""
import argparse
import json
import os
import subprocess
import sys

BENCH_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "work.h"

/* CPU time of this process: other load on a shared machine does not move the result (wall time did, ±50%). */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One "operation": a fixed amount of integer work (WORK_ROUNDS from work.h). */
static unsigned long op(unsigned long x) {
  for (int i = 0; i < WORK_ROUNDS; i++) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    x ^= x >> 29;
  }
  return x;
}

int main(int argc, char **argv) {
  double seconds = 1.0;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
  }
  unsigned long x = 1, ops = 0;
  double start = now(), elapsed = 0;
  while ((elapsed = now() - start) < seconds) {
    for (int k = 0; k < 1000; k++) x = op(x);
    ops += 1000;
  }
  printf("bench.ops_per_sec: %.1f\n", ops / elapsed);
  printf("bench.elapsed_s: %.3f\n", elapsed);
  printf("bench.checksum: %lu\n", x % 1000);
  return 0;
}
'''

MAKEFILE = '''CFLAGS ?= -O2
bench: bench.c work.h util.c
\t$(CC) $(CFLAGS) -o bench bench.c util.c
'''


# A tree's own get_maintainer.pl, slow and hostile: the report must not wait for it on the daemon's I/O thread,
# and a line with a CR (a header injection) must not reach the mail.
GET_MAINTAINER = '''#!/usr/bin/perl
while (<STDIN>) {}
sleep(SECONDS);
print "Maint Ainer <maint\\@example.org>\\n";
print "Evil <evil\\@example.org>\\rBcc: victim\\@example.net\\n";
'''


def git(dest, *args, date=None, env_extra=None):
    env = dict(os.environ)
    env.update({
        "GIT_AUTHOR_NAME": "Demo Author", "GIT_AUTHOR_EMAIL": "author@example.org",
        "GIT_COMMITTER_NAME": "Demo Committer", "GIT_COMMITTER_EMAIL": "committer@example.org",
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": dest,
    })
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{1700000000 + date * 60} +0000"
    if env_extra:
        env.update(env_extra)
    return subprocess.run(["git", "-C", dest, *args], check=True, env=env, capture_output=True,
                          text=True).stdout.strip()


def write(dest, name, text):
    with open(os.path.join(dest, name), "w") as f:
        f.write(text)


def commit(dest, n, subject, body="", author=None):
    git(dest, "add", "-A")
    message = subject + ("\n\n" + body if body else "")
    extra = {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]} if author else None
    git(dest, "commit", "-q", "-m", message, date=n, env_extra=extra)
    return git(dest, "rev-parse", "HEAD")


def commit_regression(dest, n, a):
    """The planted commit: more work per operation, with trailers naming who should hear of it."""
    slower = a.rounds * (100 + a.regression) // 100
    write(dest, "work.h", f"#define WORK_ROUNDS {slower}\n")
    return commit(dest, n, "work: do more rounds per operation",
                  "Adds rounds for a stronger mix.\n\n"
                  "Signed-off-by: Rita Regress <rita@example.org>\n"
                  "Reviewed-by: Rob Review <rob@example.org>",
                  author=("Rita Regress", "rita@example.org"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dest")
    p.add_argument("--commits", type=int, default=40)
    p.add_argument("--regress-at", type=int, default=27)
    p.add_argument("--broken-at", type=int, default=12)
    p.add_argument("--merge-at", type=int, default=18)
    p.add_argument("--regression", type=int, default=30, help="percent more work per op")
    p.add_argument("--split-at", type=int, default=0)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--regress-on-side", action="store_true")
    p.add_argument("--get-maintainer-sleep", type=int, default=0,
                   help="add a scripts/get_maintainer.pl that sleeps this long, then prints a good and a hostile line")
    a = p.parse_args()
    dest = os.path.abspath(a.dest)
    os.makedirs(dest, exist_ok=True)
    git(dest, "init", "-q", "-b", "master")
    write(dest, "bench.c", BENCH_C)
    write(dest, "Makefile", MAKEFILE)
    write(dest, "work.h", f"#define WORK_ROUNDS {a.rounds}\n")
    write(dest, "util.c", "int util_version(void) { return 0; }\n")
    write(dest, "NOTES", "demo project\n")
    if a.get_maintainer_sleep:
        os.makedirs(os.path.join(dest, "scripts"), exist_ok=True)
        write(dest, "scripts/get_maintainer.pl", GET_MAINTAINER.replace("SECONDS", str(a.get_maintainer_sleep)))
    shas = {"base": commit(dest, 0, "demo: initial benchmark")}
    n = 1
    for i in range(1, a.commits + 1):
        if i == a.regress_at and not a.regress_on_side:
            shas["culprit"] = commit_regression(dest, n, a)
        elif i == a.broken_at:
            write(dest, "util.c", "int util_version(void) { return 0 }\n")
            shas["broken"] = commit(dest, n, "util: refactor (does not build)")
        elif i == a.broken_at + 1:
            write(dest, "util.c", "int util_version(void) { return 1; }\n")
            commit(dest, n, "util: fix the build")
        elif i == a.merge_at:
            git(dest, "checkout", "-q", "-b", "side")
            for k in range(3):
                if a.regress_on_side and k == 1:
                    shas["culprit"] = commit_regression(dest, n, a)
                else:
                    with open(os.path.join(dest, "NOTES"), "a") as f:
                        f.write(f"side note {k}\n")
                    commit(dest, n, f"notes: side branch change {k}")
                n += 1
            git(dest, "checkout", "-q", "master")
            git(dest, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side", date=n)
            shas["merge"] = git(dest, "rev-parse", "HEAD")
        else:
            with open(os.path.join(dest, "NOTES"), "a") as f:
                f.write(f"note {i}\n")
            commit(dest, n, f"notes: add note {i}")
        if a.split_at and i == a.split_at:
            shas["split"] = git(dest, "rev-parse", "HEAD")
        n += 1
    shas["head"] = git(dest, "rev-parse", "HEAD")
    if a.split_at:
        git(dest, "branch", "-q", "next", shas["head"])
        git(dest, "reset", "-q", "--hard", shas["split"])
    json.dump(shas, sys.stdout)
    print()


if __name__ == "__main__":
    main()
