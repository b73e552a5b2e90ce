#!/usr/bin/env python3
"""`cmake --install` of the build into a temporary prefix: every file where the README says, `bisectctl --help`
from the prefix, both man pages render without a warning (groff -ww, man -l), the bash completion completes
commands and options when sourced into bash, and the installed bisectd, started with the installed example
config, finds the installed configs and bench-core (not the source or build tree's) and answers `bisectctl status`."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BIN, check, run, wait_for  # noqa: E402

BUILD = os.environ.get("BISECTD_BUILD_DIR", os.path.dirname(BIN))
CMAKE = os.environ.get("BISECTD_CMAKE", "cmake")

EXPECTED = [
    "bin/bisectd", "bin/bisectctl",
    "libexec/bisectd/bench-core/page_fault", "libexec/bisectd/bench-core/syscall",
    "libexec/bisectd/bench-core/pipe", "libexec/bisectd/bench-core/mmap",
    "share/bisectd/configs/bisectd.yaml", "share/bisectd/configs/jobs/demo-throughput.yaml",
    "share/bisectd/configs/jobs/kbench-page-fault.yaml", "share/bisectd/configs/lab/qemu.yaml",
    "share/bisectd/configs/kconfig/qemu-x86_64.config",
    "share/doc/bisectd/README.md", "share/doc/bisectd/LICENSE", "share/doc/bisectd/docs/running-on-a-real-lab.md",
    "share/man/man1/bisectd.1", "share/man/man1/bisectctl.1",
    "share/bash-completion/completions/bisectctl", "share/bash-completion/completions/bisectd",
    "share/zsh/site-functions/_bisectctl", "share/zsh/site-functions/_bisectd",
    "lib/systemd/system/bisectd.service", "lib/sysusers.d/bisectd.conf",
]


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def install(prefix):
    r = sh([CMAKE, "--install", BUILD, "--prefix", prefix])
    check(r.returncode == 0, f"cmake --install: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    missing = [p for p in EXPECTED if not os.path.isfile(os.path.join(prefix, p))]
    check(not missing, f"not installed: {missing}")
    for program in ("bin/bisectd", "bin/bisectctl", "libexec/bisectd/bench-core/page_fault"):
        check(os.access(os.path.join(prefix, program), os.X_OK), f"{program} is not executable")


def top_level_commands(bisectctl):
    r = sh([bisectctl, "--help"])
    check(r.returncode == 0 and "Subcommands:" in r.stdout, f"bisectctl --help: exit {r.returncode}\n{r.stdout}")
    section = r.stdout.split("Subcommands:", 1)[1]
    return re.findall(r"^  (\S+)", section, re.M)


def check_man(prefix, commands):
    for page in ("bisectd", "bisectctl"):
        path = os.path.join(prefix, "share/man/man1", page + ".1")
        r = sh(["groff", "-man", "-ww", "-z", path])
        check(r.returncode == 0 and r.stderr == "", f"groff -ww {page}.1: exit {r.returncode}: {r.stderr}")
        r = sh(["man", "-l", "-Tutf8", path], env=dict(os.environ, MANWIDTH="80"))
        check(r.returncode == 0 and r.stderr == "", f"man -l {page}.1: exit {r.returncode}: {r.stderr}")
        text = re.sub(r".\x08", "", r.stdout)
        for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "SEE ALSO"):
            check(re.search(rf"^{heading}$", text, re.M), f"{page}(1) has no {heading} section:\n{text[:2000]}")
        if page == "bisectd":
            check("--data-dir" in text and "BISECTD_CONFIGS_DIR" in text, f"bisectd(1) lacks options:\n{text}")
        else:
            # Every command of the parser is in the page, and the leaf commands with their options.
            for command in commands:
                check(re.search(rf"^   {re.escape(command)}\b", text, re.M), f"bisectctl(1) lacks '{command}'")
            for needle in ("tree add", "--good", "bisections rm", "--purge", "EXIT STATUS", "--follow"):
                check(needle in text, f"bisectctl(1) lacks '{needle}':\n{text}")


def complete(script, words):
    """The bash completion's answer for the command line `words` (the last one is being typed)."""
    probe = f"""source {script}
spec=$(complete -p bisectctl) || exit 3
fn=${{spec#*-F }}; fn=${{fn%% *}}
COMP_WORDS=({' '.join(f"'{w}'" for w in words)}); COMP_CWORD={len(words) - 1}
COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}
"$fn" bisectctl "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    r = sh(["bash", "--norc", "--noprofile", "-c", probe])
    check(r.returncode == 0, f"completion of {words}: exit {r.returncode}: {r.stderr}")
    return r.stdout.split()


def check_completion(prefix, commands, tmp):
    script = os.path.join(prefix, "share/bash-completion/completions/bisectctl")
    check(sorted(complete(script, ["bisectctl", ""])) == sorted(commands + ["help"]),
          f"bisectctl <TAB>: {complete(script, ['bisectctl', ''])}, expected {commands} and help")
    cases = [
        (["bisectctl", "tr"], ["tree"]),
        (["bisectctl", "bisections", ""], ["rm"]),
        (["bisectctl", "tree", "s"], ["set", "show"]),
        (["bisectctl", "bisect", "start", "--g"], ["--good"]),
        (["bisectctl", "--server", "http://x", "wai"], ["wait"]),
        (["bisectctl", "help", "bisect"], ["bisect", "bisections"]),
        (["bisectctl", "logs", "build", "3", "--fo"], ["--follow"]),
    ]
    for words, expected in cases:
        got = complete(script, words)
        check(sorted(got) == sorted(expected), f"completion of {' '.join(words)!r}: {got}, expected {expected}")
    # An option that takes a file completes file names.
    open(os.path.join(tmp, "job-one.yaml"), "w").close()
    got = complete(script, ["bisectctl", "tree", "add", "x", "y", "--job", os.path.join(tmp, "job-o")])
    check(got == [os.path.join(tmp, "job-one.yaml")], f"--job FILE completion: {got}")
    if shutil.which("zsh"):
        zsh_script = os.path.join(prefix, "share/zsh/site-functions/_bisectctl")
        for name in ("_bisectctl", "_bisectd"):
            r = sh(["zsh", "-n", os.path.join(prefix, "share/zsh/site-functions", name)])
            check(r.returncode == 0, f"zsh -n {name}: {r.stderr}")
        for words, expected in [(["bisectctl", "tr"], ["tree"]), (["bisectctl", "tree", ""], None),
                                (["bisectctl", "bisect", "start", "--"], None)]:
            got = complete_zsh(zsh_script, words)
            if expected is None:  # every candidate of that command, as bash offers them
                expected = complete(script, words)
            check(sorted(got) == sorted(expected), f"zsh completion of {' '.join(words)!r}: {got}, expected {expected}")
    else:
        print("zsh not installed: the zsh completion is not checked")


def complete_zsh(script, words):
    """The zsh completion's candidates, with compadd and _files replaced by printers (no completion system needed:
    the function only reads $words and $CURRENT)."""
    probe = f"""compadd() {{ [[ $1 == -- ]] && shift; print -l -- "$@"; }}
_files() {{ print -- FILES; }}
words=({' '.join(f"'{w}'" for w in words)}); CURRENT={len(words)}
source {script}
"""
    r = sh(["zsh", "-f", "-c", probe])
    check(r.returncode == 0, f"zsh completion of {words}: exit {r.returncode}: {r.stderr}")
    prefix = words[-1]
    return [w for w in r.stdout.split() if w.startswith(prefix)]


def check_unit(prefix):
    with open(os.path.join(prefix, "lib/systemd/system/bisectd.service")) as f:
        unit = f.read()
    execstart = re.search(r"^ExecStart=(\S+)", unit, re.M)
    check(execstart and execstart.group(1) == os.path.join(prefix, "bin", "bisectd"),
          f"ExecStart does not name the installed bisectd: {execstart and execstart.group(1)}")
    for line in ("User=bisectd", "StateDirectory=bisectd", "ProtectSystem=strict", "NoNewPrivileges=yes",
                 "CapabilityBoundingSet="):
        check(re.search(rf"^{re.escape(line)}$", unit, re.M), f"bisectd.service lacks {line}")


def check_installed_daemon(env, prefix):
    """The installed bisectd with the installed example config on a temp data dir and a free port."""
    bisectd = os.path.join(prefix, "bin", "bisectd")
    config = os.path.join(prefix, "share/bisectd/configs/bisectd.yaml")
    environment = {k: v for k, v in os.environ.items() if k not in ("BISECTD_CONFIGS_DIR", "BISECTD_BENCH_CORE_DIR")}
    log = open(env.log_path, "a")
    env.daemon = subprocess.Popen([bisectd, "--config", config, "--data-dir", env.data, "--listen",
                                   f"127.0.0.1:{env.port}", "-v"], stdout=log, stderr=log, env=environment)
    wait_for(env.daemon_up, 30, "the installed bisectd did not answer")
    ctl_env = dict(environment, BISECTD_URL=env.url, BISECTD_TOKEN_FILE=os.path.join(env.data, "token"))
    r = sh([os.path.join(prefix, "bin", "bisectctl"), "status"], env=ctl_env)
    check(r.returncode == 0 and env.data in r.stdout, f"installed bisectctl status: {r.returncode}\n{r.stdout}{r.stderr}")
    with open(env.log_path) as f:
        log_text = f.read()
    for line in (f"configs dir: {prefix}/share/bisectd/configs", f"bench-core: {prefix}/libexec/bisectd/bench-core"):
        check(line in log_text, f"the installed bisectd does not use its installed files: no '{line}' in\n{log_text}")


def test(env):
    prefix = os.path.join(env.dir, "prefix")
    install(prefix)
    bisectctl = os.path.join(prefix, "bin", "bisectctl")
    commands = top_level_commands(bisectctl)
    check(len(commands) >= 10 and "tree" in commands and "logs" in commands, f"commands: {commands}")
    check_man(prefix, commands)
    check_completion(prefix, commands, env.dir)
    check_unit(prefix)
    check_installed_daemon(env, prefix)


if __name__ == "__main__":
    sys.exit(run("install", test))
