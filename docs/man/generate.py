#!/usr/bin/env python3
"""Generates a program's man page and its bash and zsh completion from one source: the program's own CLI11
--help output (its command table as the parser knows it) plus a prose file (docs/man/PROGRAM.txt).

Usage: generate.py PROGRAM_BINARY PROSE_FILE VERSION --man OUT.1 [--bash OUT] [--zsh OUT]

The prose file: `.SH`-level sections start with a line `# NAME`; paragraphs are separated by blank lines; lines
indented by two spaces are literal (examples); `- ` lines are list items; `term :: text` lines are tagged
paragraphs; `code` in backquotes is set in bold. The line `@OPTIONS@` is replaced by the generated options and
`@COMMANDS@` by every command with its arguments and options. Runs the program only with --help.
"""
import argparse
import os
import re
import subprocess
import sys

SECTION = re.compile(r"^([A-Z][A-Za-z ]*):\s*$")


class Command:
    def __init__(self, path, description, usage):
        self.path = path              # ["tree", "add"]; [] for the program itself
        self.description = description
        self.usage = usage            # "bisectctl tree add [OPTIONS] NAME URL"
        self.positionals = []         # (name, text)
        self.options = []             # (spelling, value, text): ("-f,--follow", "", "keep printing ...")
        self.subcommands = []         # (name, text)
        self.children = []


def run_help(binary, path):
    env = dict(os.environ, COLUMNS="200")
    r = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        sys.exit(f"{binary} {' '.join(path)} --help: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def entries(lines):
    """CLI11's two-column lists: 'NAME  text'; a long NAME puts the text on the next, deeper indented line."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        if re.match(r"^  \S", line):
            parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            out.append([parts[0], parts[1].strip() if len(parts) > 1 else ""])
        elif out:
            out[-1][1] = (out[-1][1] + " " + line.strip()).strip()
    return out


def parse_help(text, path):
    lines = text.splitlines()
    description, usage, sections, current = [], "", {}, None
    for line in lines:
        if line.startswith("Usage: "):
            usage = line[len("Usage: "):].strip()
            current = None
        elif SECTION.match(line):
            current = SECTION.match(line).group(1)
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
        elif not usage and line.strip():
            description.append(line.strip())
    command = Command(path, " ".join(description), usage)
    for name, text in entries(sections.get("Positionals", [])):
        command.positionals.append((name.split()[0], text))
    for name, text in entries(sections.get("Options", [])):
        spelling, _, value = name.partition(" ")
        command.options.append((spelling, value.strip(), text))
    for name, text in entries(sections.get("Subcommands", [])):
        command.subcommands.append((name, text))
    return command


def load(binary, path=()):
    command = parse_help(run_help(binary, list(path)), list(path))
    for name, _ in command.subcommands:
        command.children.append(load(binary, [*path, name]))
    return command


def walk(command):
    yield command
    for child in command.children:
        yield from walk(child)


# --- man page ---------------------------------------------------------------------------------------------------

def escape(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)


def line_start(text):
    """A text line must not start with . or ' (a request to troff)."""
    return "\\&" + text if text[:1] in (".", "'") else text


def spelled(option):
    spelling, value, _ = option
    names = [f"\\fB{escape(n)}\\fR" for n in spelling.split(",")]
    value_text = value.replace(" REQUIRED", "").replace(" Needs:", "").strip()
    return ", ".join(names) + (f" \\fI{escape(value_text)}\\fR" if value_text else "")


def man_options(command, with_help=True):
    out = []
    for option in command.options:
        if with_help or "--help" not in option[0].split(","):
            out += [".TP", spelled(option), line_start(escape(option[2]))]
    return out


def man_commands(root):
    out = []
    for command in walk(root):
        if not command.path or command.children and not command.positionals and len(command.options) <= 1:
            if command.path:  # a group: named once, its commands follow
                out += [".SS " + escape(" ".join(command.path)), line_start(escape(command.description))]
            continue
        out += [".SS " + escape(" ".join(command.path)), ".B " + escape(command.usage),
                ".PP", line_start(escape(command.description))]
        for name, text in command.positionals:
            out += [".TP", f"\\fI{escape(name)}\\fR", line_start(escape(text))]
        out += man_options(command, with_help=False)  # every command has -h,--help: said once, for the program
    return [o for o in out if o]


def prose_to_man(prose, generated):
    out, literal, paragraph_open = [], False, False
    for raw in prose.splitlines():
        is_literal = raw.startswith("  ") and raw.strip() != ""
        if literal and not is_literal:
            out += [".RE", ".fi"]
            literal = False
        if raw.strip() in generated:
            out += generated[raw.strip()]
            paragraph_open = True
        elif raw.startswith("# "):
            out.append(".SH " + escape(raw[2:].strip()))
            paragraph_open = False
        elif is_literal:
            if not literal:
                out += [".PP", ".nf", ".RS 4"]
                literal = True
            out.append(line_start(escape(raw[2:])))
            paragraph_open = False
        elif raw.startswith("- "):
            out += [".IP \\(bu 2", line_start(escape(raw[2:]))]
            paragraph_open = True
        elif " :: " in raw:
            term, text = raw.split(" :: ", 1)
            out += [".TP", line_start(escape(term.strip())), line_start(escape(text.strip()))]
            paragraph_open = True
        elif not raw.strip():
            paragraph_open = False
        else:
            if not paragraph_open:
                out.append(".PP")
                paragraph_open = True
            out.append(line_start(escape(raw.strip())))
    if literal:
        out += [".RE", ".fi"]
    return out


def man_page(root, name, prose, version):
    generated = {"@OPTIONS@": man_options(root), "@COMMANDS@": man_commands(root)}
    head = [f'.\\" Generated by docs/man/generate.py from `{name} --help` and docs/man/{name}.txt; do not edit.',
            f'.TH {name.upper()} 1 "" "bisectd {version}" "bisectd manual"', ".nh"]
    return "\n".join(head + prose_to_man(prose, generated)) + "\n"


# --- completion -------------------------------------------------------------------------------------------------

def tables(root, name):
    """(key, subcommands, options, options taking a value) per command; the key is the command path."""
    rows = []
    for command in walk(root):
        key = " ".join([name, *command.path])
        subs = [s for s, _ in command.subcommands]
        if not command.path and subs:
            subs.append("help")
        opts, valued = [], []
        for spelling, value, _ in command.options:
            for spelled_name in spelling.split(","):
                opts.append(spelled_name)
                if value:
                    valued.append(spelled_name)
        if not command.path and "--json" not in opts and subs:
            opts.append("--json")  # accepted before the command too
        rows.append((key, subs, opts, valued))
    if root.subcommands:
        rows.append((f"{name} help", [s for s, _ in root.subcommands], [], []))
    return rows


def bash_completion(root, name):
    fn = "_" + name.replace("-", "_")
    rows = tables(root, name)
    dq = lambda text: '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'
    assoc = lambda var, index: [f"  local -A {var}=("] + [f"    [{dq(r[0])}]={dq(' '.join(r[index]))}"
                                                           for r in rows] + ["  )"]
    body = [f"# bash completion for {name}: generated by docs/man/generate.py from `{name} --help`; do not edit.",
            f"{fn}() {{"]
    body += assoc("subs", 1) + assoc("opts", 2) + assoc("valued", 3)
    body += [
        "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
        f"  local cmd={name} word i",
        "  # The command path: the words before the cursor that name a (sub)command of the one so far.",
        "  for ((i = 1; i < COMP_CWORD; i++)); do",
        "    word=${COMP_WORDS[i]}",
        '    [[ -n ${subs["$cmd $word"]+set} ]] && cmd="$cmd $word"',
        "  done",
        '  if [[ " ${valued[$cmd]} " == *" $prev "* ]]; then',
        '    COMPREPLY=($(compgen -f -- "$cur"))',
        "  elif [[ $cur == -* ]]; then",
        '    COMPREPLY=($(compgen -W "${opts[$cmd]}" -- "$cur"))',
        "  else",
        '    COMPREPLY=($(compgen -W "${subs[$cmd]}" -- "$cur"))',
        '    [[ ${#COMPREPLY[@]} -eq 0 && -z ${subs[$cmd]} ]] && COMPREPLY=($(compgen -f -- "$cur"))',
        "  fi",
        "  return 0",
        "}",
        f"complete -F {fn} {name}",
    ]
    return "\n".join(body) + "\n"


def zsh_completion(root, name):
    fn = "_" + name.replace("-", "_")
    rows = tables(root, name)
    quote = lambda s: "'" + s.replace("'", "'\\''") + "'"
    assoc = lambda var, index: [f"  {var}=("] + [f"    {quote(r[0])} {quote(' '.join(r[index]))}"
                                                  for r in rows] + ["  )"]
    body = [f"#compdef {name}",
            f"# zsh completion for {name}: generated by docs/man/generate.py from `{name} --help`; do not edit.",
            f"{fn}() {{",
            "  local -A subs opts valued"]
    body += assoc("subs", 1) + assoc("opts", 2) + assoc("valued", 3)
    body += [
        f"  local cmd={name} word i",
        "  for (( i = 2; i < CURRENT; i++ )); do",
        "    word=${words[i]}",
        '    (( ${+subs[$cmd $word]} )) && cmd="$cmd $word"',
        "  done",
        '  if [[ " ${valued[$cmd]} " == *" ${words[CURRENT-1]} "* ]]; then',
        "    _files",
        "  elif [[ ${words[CURRENT]} == -* ]]; then",
        "    compadd -- ${=opts[$cmd]}",
        "  elif [[ -n ${subs[$cmd]} ]]; then",
        "    compadd -- ${=subs[$cmd]}",
        "  else",
        "    _files",
        "  fi",
        "}",
        f'{fn} "$@"',
    ]
    return "\n".join(body) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("prose")
    p.add_argument("version")
    p.add_argument("--man", required=True)
    p.add_argument("--bash")
    p.add_argument("--zsh")
    a = p.parse_args()
    name = os.path.basename(a.binary)
    root = load(a.binary)
    with open(a.prose) as f:
        prose = f.read()
    outputs = {a.man: man_page(root, name, prose, a.version)}
    if a.bash:
        outputs[a.bash] = bash_completion(root, name)
    if a.zsh:
        outputs[a.zsh] = zsh_completion(root, name)
    for path, text in outputs.items():
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
