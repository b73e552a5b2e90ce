#!/usr/bin/env python3
"""A tree's build leaves traps in its worktree for the daemon's next checkout (unsandboxed, forced, removing
untracked files), under the default sandbox (`sandbox: auto`):
- tree "redirect": the build appends `[core] worktree = VICTIM` to the worktree's .git/config (today's bisectd
  then checks the next commit out into VICTIM and deletes everything else there);
- tree "links": the build plants untracked symlinks out of the worktree where later commits track a directory
  (`out -> VICTIM`, commit adds out/x) and the daemon's token (`state -> DATA`, commit adds state/token).
The watcher checks out two more commits of each tree: VICTIM, the token and the database stay as they were, the
worktrees hold the commits, and the daemon keeps measuring. Once more with `sandbox: none`: the checkout's own
defences (vcs/worktree_guard.hpp) without the sandbox's read-only git dir."""
import os
import signal
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, git, run, wait_for  # noqa: E402

REDIRECT_BUILD = r"""#!/bin/sh
printf '[core]\n\tworktree = %s\n' "$VICTIM" >> .git/config 2>/dev/null && echo "hostile: appended core.worktree"
printf '#!/bin/sh\necho bench.ops_per_sec: 100\n' > bench && chmod +x bench
"""

LINKS_BUILD = r"""#!/bin/sh
ln -sT "$VICTIM" out 2>/dev/null && echo "hostile: planted out"
ln -sT "$DATA" state 2>/dev/null && echo "hostile: planted state"
printf '#!/bin/sh\necho bench.ops_per_sec: 100\n' > bench && chmod +x bench
"""


def make_tree(path, build_sh):
    os.makedirs(path)
    git(path, "init", "-q", "-b", "master")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "t")
    for name, text in {"build.sh": build_sh, ".gitignore": "bench\n", "a.c": "int a = 0;\n"}.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return git(path, "rev-parse", "HEAD")


def commit(path, message, files):
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(path, name)), exist_ok=True)
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


def listing(root):
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def scenario(env, tag, *daemon_args):
    """One daemon on its own data dir, both trees, two more commits each; checks what must not have changed."""
    env.data = os.path.join(env.dir, f"data-{tag}")
    victim = os.path.join(env.dir, f"victim-{tag}")
    os.makedirs(victim)
    with open(os.path.join(victim, "precious.txt"), "w") as f:
        f.write("mine\n")
    redirect, links = os.path.join(env.dir, f"redirect-{tag}"), os.path.join(env.dir, f"links-{tag}")
    firsts = {"redirect": make_tree(redirect, REDIRECT_BUILD), "links": make_tree(links, LINKS_BUILD)}
    job = os.path.join(env.dir, f"job-{tag}.yaml")
    with open(job, "w") as f:
        f.write(f"""name: hostile-build
build: {{recipe: command, command: [sh, build.sh], artifacts: [bench], timeout: 120s,
        env: {{VICTIM: "{victim}", DATA: "{env.data}"}}}}
run: {{machine_group: local, command: [./bench], runs: 1, timeout: 60s}}
metrics: {{parse: lkp, primary: bench.ops_per_sec, direction: higher_is_better, threshold: 5%}}
""")
    log_start = os.path.getsize(env.log_path) if os.path.exists(env.log_path) else 0
    env.start_daemon(*daemon_args)
    sandboxed = "run under bwrap" in read(env.log_path)[log_start:].decode()
    print(f"hostile_worktree ({tag}): the builds run {'under bwrap' if sandboxed else 'unsandboxed'}")
    token = read(os.path.join(env.data, "token"))
    env.ctl("tree", "add", "redirect", redirect, "--branch", "master", "--job", job)
    env.ctl("tree", "add", "links", links, "--branch", "master", "--job", job)

    def measured(n):
        wait_for(lambda: env.ctl_json("status")["queue"].get("done", 0) >= n, 300,
                 f"fewer than {n} measurements done: {env.ctl_json('status')['queue']}")

    measured(2)
    heads = {}
    for round_ in (1, 2):
        heads["redirect"] = commit(redirect, f"change {round_}", {"a.c": f"int a = {round_};\n"})
        heads["links"] = commit(links, f"tracks where the links were {round_}",
                                {"out/x": f"tracked {round_}\n", "state/token": f"not the token {round_}\n"})
        measured(2 + 2 * round_)

    check(listing(victim) == ["precious.txt"], f"the victim dir changed: {listing(victim)}")
    check(read(os.path.join(victim, "precious.txt")) == b"mine\n", "the victim's file changed")
    check(read(os.path.join(env.data, "token")) == token, "the daemon's token changed")
    with sqlite3.connect(f"file:{os.path.join(env.data, 'bisectd.db')}?mode=ro", uri=True, timeout=10) as c:
        trees = sorted(row[0] for row in c.execute("SELECT name FROM trees"))
    check(trees == ["links", "redirect"], f"the database lost its trees: {trees}")
    worktrees = os.path.join(env.data, "worktrees")
    for name in ("redirect", "links"):
        wt = os.path.join(worktrees, name)
        # The last build ran after the last checkout: unsandboxed, its core.worktree is in .git/config again.
        explicit = ["--git-dir", os.path.join(wt, ".git"), "--work-tree", wt]
        head = git(wt, *explicit, "rev-parse", "HEAD")
        check(head == heads[name], f"worktree {name} is at {head}, not {heads[name]}")
        check(git(wt, *explicit, "status", "--porcelain") == "", f"worktree {name} differs from its commit")
    for link in ("out", "state"):
        check(not os.path.islink(os.path.join(worktrees, "links", link)), f"the planted link {link} is still there")
    with open(os.path.join(worktrees, "links", "state", "token")) as f:
        check(f.read() == "not the token 2\n", "the tracked state/token is not the commit's")
    env.ctl("status")  # the daemon still answers with its (unchanged) token

    def first_build_log(tree):
        [log] = [os.path.join(d, "build.log") for d, _, files in os.walk(os.path.join(env.data, "builds"))
                 if os.path.basename(d) == firsts[tree] and "build.log" in files]
        return read(log).decode()
    # The traps were really set (the links; the config unsandboxed), or refused by the sandbox's read-only git dir.
    check("hostile: planted out" in first_build_log("links") and "hostile: planted state" in first_build_log("links"),
          "the links build did not plant its links:\n" + first_build_log("links"))
    appended = "hostile: appended core.worktree" in first_build_log("redirect")
    check(appended != sandboxed, f"sandboxed={sandboxed} but the build {'could' if appended else 'could not'} append "
          "to .git/config")
    env.kill_daemon(signal.SIGTERM)


def test(env):
    scenario(env, "auto")  # the default sandbox: the git dir is read-only, the links are swept
    config = os.path.join(env.dir, "unsandboxed.yaml")
    with open(config, "w") as f:
        f.write("sandbox: none\n")
    scenario(env, "none", "--config", config)  # the checkout alone: the git dir is reset, the links are swept


if __name__ == "__main__":
    sys.exit(run("hostile_worktree", test))
