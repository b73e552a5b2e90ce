#!/usr/bin/env python3
"""Merge recursion end to end: the slower commit sits on a side branch merged with --no-ff. The first-parent
search must land on the merge, then recurse into the merged branch (merge base as good, the branch tip as bad)
and name the side-branch commit; the show output records the merge it went through."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import bisect_side_branch, check, make_repo, run, write_job  # noqa: E402


def test(env):
    repo = os.path.join(env.dir, "repo")
    shas = make_repo(repo, "--regress-on-side")
    job = write_job(os.path.join(env.dir, "job.yaml"), seconds="0.2")
    show, caused, boots, elapsed = bisect_side_branch(env, repo, shas, job, 600)
    # The cost covers both phases: runs are exactly the samples its own requests stored (search, verification,
    # the branch's phase), and the runs it reused from the watch are counted apart.
    check(show["runs"] == caused, f"show runs {show['runs']} != {caused} samples of the bisection's requests")
    check(show["boots"] == boots, f"show boots {show['boots']} != {boots}")
    check(show["runs_reused"] >= 1, f"the watch's runs of the head were not counted as reused: {show['runs_reused']}")
    # Two phases of an easy step (measured: 51 runs with two verifications): a bound, not a timing, so that a
    # bisection that loses its way (the posterior collapsing, a phase starting over) shows here.
    check(show["runs"] + show["runs_reused"] <= 150, f"the whole bisection took {show['runs']} runs")
    # Machine time: each run's benchmark takes 0.2 s at least, and the one local machine ran its visits one at a
    # time within the bisection's life.
    check(0.2 * show["runs"] <= show["machine_seconds"] <= elapsed + 1,
          f"machine time {show['machine_seconds']:.1f} s for {show['runs']} runs of 0.2 s in {elapsed:.1f} s")
    print(f"merge: {show['runs']} runs ({show['runs_reused']} reused apart), {show['builds']} builds, {boots} boots, "
          f"{show['machine_seconds']:.1f} s of machine time in {elapsed:.1f} s")


if __name__ == "__main__":
    sys.exit(run("merge", test))
