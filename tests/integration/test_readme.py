#!/usr/bin/env python3
"""The README's walk-through, executed as written: the fenced `sh` block under "## Walk-through" runs in one bash
from the source tree, command by command, with only its documented placeholders moved (`/tmp/...` into a temp
dir, port 8765 to a free one, `$PWD/build/demo/bin` to this build's programs). A command fails the test when it
exits otherwise than 0, or than N for a command whose comment starts with "exit N:". The bisection it starts by
hand must find the commit make_demo_repo.py planted."""
import json
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, SOURCE, check, free_port, run  # noqa: E402

README = os.path.join(SOURCE, "README.md")
HEADING = "## Walk-through"
PLACEHOLDERS = ("$PWD/build/demo/bin", "/tmp/", "8765")


def walk_through():
    with open(README) as f:
        text = f.read()
    check(HEADING in text, f"README has no '{HEADING}' section")
    section = text.split(HEADING, 1)[1]
    section = section.split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", section, re.M | re.S)
    check(block, "the walk-through has no ```sh block")
    return block.group(1)


def substituted(block, tmp, port):
    for placeholder in PLACEHOLDERS:
        check(placeholder in block, f"placeholder {placeholder!r} is not in the walk-through (update this test)")
    # One pass: a replacement is never replaced again (the build, like a clone in /tmp, may itself be under /tmp/).
    values = {"$PWD/build/demo/bin": BIN, "/tmp/": tmp + "/", "8765": str(port)}
    return re.sub("|".join(re.escape(p) for p in PLACEHOLDERS), lambda m: values[m.group(0)], block)


def script(block, tmp):
    """One bash script: every command line, then a check of its exit code (the README's line named on failure)."""
    out = [f"cd {SOURCE}"]
    commands = 0
    for number, line in enumerate(block.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        check(not stripped.endswith("\\"), f"walk-through line {number}: continuation lines are not supported")
        commands += 1
        code, _, comment = stripped.partition(" #")
        if code.rstrip().endswith("&"):
            out += [line, f"echo $! >> {tmp}/background.pids"]
            continue
        expected = re.match(r"\s*exit (\d+):", comment)
        expected = int(expected.group(1)) if expected else 0
        quoted = stripped.replace("'", "'\\''")
        out += [line,
                f"rc=$?; if [ $rc -ne {expected} ]; then echo 'README walk-through: exit '$rc' (expected {expected}): "
                f"{quoted}' >&2; exit 1; fi"]
    check(commands >= 20, f"only {commands} commands in the walk-through")
    return "\n".join(out) + "\n"


def stop_background(tmp):
    try:
        with open(os.path.join(tmp, "background.pids")) as f:
            pids = [int(p) for p in f.read().split()]
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def test(env):
    tmp = env.dir
    env.log_path = os.path.join(tmp, "bd.log")  # where the walk-through sends the daemon's log
    text = script(substituted(walk_through(), tmp, free_port()), tmp)
    with open(os.path.join(tmp, "walk-through.sh"), "w") as f:
        f.write(text)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BISECTD_")}
    out_path, err_path = os.path.join(tmp, "walk-through.out"), os.path.join(tmp, "walk-through.err")
    # Output to files, not pipes: the daemon started in the background inherits them, and a pipe would stay open
    # until it ends.
    try:
        with open(out_path, "w") as out, open(err_path, "w") as err:
            code = subprocess.run(["bash", "--norc", "--noprofile", os.path.join(tmp, "walk-through.sh")],
                                  stdout=out, stderr=err, timeout=600, env=environment).returncode
    finally:
        stop_background(tmp)
    with open(out_path) as f_out, open(err_path) as f_err:
        r = subprocess.CompletedProcess([], code, f_out.read(), f_err.read())
    print(r.stdout)
    check(r.returncode == 0, f"the walk-through failed (exit {r.returncode}):\n{r.stderr[-3000:]}\n"
                             f"stdout tail:\n{r.stdout[-2000:]}")
    lines = r.stdout.splitlines()
    planted = json.loads(next(line for line in lines if line.startswith("{")))["culprit"]
    shown = "\n".join(line for line in lines if not line.startswith("{"))  # without make_demo_repo's summary
    check(planted[:12] in shown, f"the planted culprit {planted[:12]} is not in the walk-through's output")
    check(re.search(r"^\s*30\s+c30\s+down\s+-10\.\d%", shown, re.M), "detect did not report the series' step at c30")
    with open(os.path.join(tmp, "bd", "mail.mbox"), errors="replace") as f:
        check(planted[:12] in f.read(), "the report in the walk-through's mbox does not name the planted culprit")


if __name__ == "__main__":
    sys.exit(run("readme", test))
