#!/usr/bin/env python3
"""configs/bisectd.yaml, the commented example: it names every key the daemon's config reader accepts (active or
commented out), bisectd starts with it (a temp data dir and a free port on the command line) and takes its values
(`bisectctl status` answers from that data dir; a planted mistake in a copy of it stops the daemon with the
file:line of the mistake)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, SOURCE, check, make_repo, run, wait_for, write_job  # noqa: E402

EXAMPLE = os.path.join(SOURCE, "configs", "bisectd.yaml")
READER = os.path.join(SOURCE, "daemon", "config", "config.cpp")


def reader_keys():
    """The keys config.cpp's check_keys calls accept: top level and the mail: section."""
    with open(READER) as f:
        text = f.read()
    text = text[:text.index("load_lab_file(")]  # the lab file's keys are another file's
    lists = {}
    for section, body in re.findall(r'check_keys\(\s*(?:root|mail),\s*"(\w*)",\s*\{([^}]*)\}', text):
        lists[section] = set(re.findall(r'"(\w+)"', body))
    check(set(lists) == {"", "mail"}, f"config.cpp's check_keys calls not found as expected: {sorted(lists)}")
    return lists[""], lists["mail"]


def example_keys():
    """Keys in the example, active ("key: value") or commented out ("# key: value"), by section (indentation)."""
    top, mail = set(), set()
    with open(EXAMPLE) as f:
        for line in f:
            m = re.match(r"^( *)([a-z_]+):(?: |$)", line) or re.match(r"^( *)# ([a-z_]+): \S", line)
            if m:
                (mail if m.group(1) else top).add(m.group(2))
    return top, mail


def start(env, config, expect_exit=None, extra=()):
    args = [os.path.join(BIN, "bisectd"), "--config", config, "--data-dir", env.data,
            "--listen", f"127.0.0.1:{env.port}", *extra]
    log = open(env.log_path, "a")
    if expect_exit is not None:
        return subprocess.run(args, stdout=log, stderr=subprocess.PIPE, text=True, timeout=60)
    env.daemon = subprocess.Popen(args, stdout=log, stderr=log)
    wait_for(env.daemon_up, 30, "bisectd did not answer with configs/bisectd.yaml")
    return None


def test(env):
    top, mail = reader_keys()
    ex_top, ex_mail = example_keys()
    check(top - {"mail"} <= ex_top and "mail" in ex_top, f"keys the example lacks: {sorted(top - ex_top)}")
    check(mail <= ex_mail, f"mail keys the example lacks: {sorted(mail - ex_mail)}")
    check(ex_top <= top and ex_mail <= mail,
          f"keys in the example the reader does not know: {sorted((ex_top - top) | (ex_mail - mail))}")

    start(env, EXAMPLE)
    status = env.ctl_json("status")
    check(os.path.realpath(status["data_dir"]) == os.path.realpath(env.data),
          f"status data_dir {status['data_dir']}, expected the command line's {env.data}")
    check(len(status.get("machines", [])) == 1, f"machines: {status.get('machines')} (the example has no lab:)")
    env.kill_daemon()

    # A copy with one misspelt key: the daemon refuses it, naming the copy's file:line and the key.
    with open(EXAMPLE) as f:
        lines = f.read().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("confirm_runs:"))
    lines[at] = "confirm_run: 5"
    bad = os.path.join(env.dir, "bad.yaml")
    with open(bad, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = start(env, bad, expect_exit=2)
    check(r.returncode == 2 and f"{bad}:{at + 1}" in r.stderr and "confirm_run" in r.stderr,
          f"a misspelt key: exit {r.returncode}, stderr {r.stderr!r}")

    # --poll-interval takes the units the config file takes; a bad one is one line naming the option.
    r = start(env, EXAMPLE, expect_exit=2, extra=("--poll-interval", "5x"))
    check(r.returncode == 2 and "--poll-interval: '5x'" in r.stderr and r.stderr.count("[error]") == 1,
          f"--poll-interval 5x: exit {r.returncode}, stderr {r.stderr!r}")
    start(env, EXAMPLE, extra=("--poll-interval", "90m"))
    repo = os.path.join(env.dir, "repo")
    make_repo(repo, "--commits", "3")
    env.ctl("tree", "add", "demo", repo, "--branch", "master", "--job", write_job(os.path.join(env.dir, "job.yaml")))
    tree = env.ctl_json("tree", "show", "demo")["tree"]
    check(tree["poll_interval_s"] == 5400, f"--poll-interval 90m: the tree polls every {tree['poll_interval_s']}s")
    env.kill_daemon()


if __name__ == "__main__":
    sys.exit(run("config_example", test))
