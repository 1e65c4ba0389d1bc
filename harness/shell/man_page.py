"""Writes cohort(1), the man page, from the program's own --help texts, so it says what the help
says: the overview from `cohort --help`, then a section per command (and subcommand) from its
`--help`.

Usage: man_page.py COHORT OUTPUT VERSION
"""
import subprocess
import sys

# (command words, as `cohort WORDS --help` takes them)
COMMANDS = [
    ["run"], ["launch"], ["submit"], ["experiment", "list"], ["experiment", "describe"],
    ["experiment", "kill"], ["experiment", "pause"], ["experiment", "activate"],
    ["experiment", "archive"], ["experiment", "unarchive"], ["experiment", "delete"],
    ["task", "list"], ["agent", "list"], ["trial", "logs"], ["trial", "describe"],
    ["trial", "kill"], ["checkpoint", "list"], ["checkpoint", "export"], ["agent"],
    ["orchestrator"], ["plugin"], ["report"], ["doctor"], ["keygen"],
]


def help_text(cohort, words):
    done = subprocess.run([cohort, *words, "--help"], capture_output=True, text=True, timeout=60)
    text = done.stdout if done.stdout.strip() else done.stderr
    if not text.strip():
        sys.exit(f"man_page.py: `cohort {' '.join(words)} --help` printed nothing")
    return text


def roff(text):
    """Help text as roff: verbatim, its backslashes and leading dots escaped."""
    lines = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return ".nf\n" + "\n".join(lines) + "\n.fi\n"


def main():
    cohort, output, version = sys.argv[1], sys.argv[2], sys.argv[3]
    page = [
        f'.TH COHORT 1 "" "cohort {version}" "User Commands"',
        ".SH NAME",
        "cohort \\- data-parallel training runtime: runs, agents, an orchestrator and its client",
        ".SH SYNOPSIS",
        ".B cohort",
        ".I COMMAND",
        "[ARGS]",
        ".SH DESCRIPTION",
        roff(help_text(cohort, [])).rstrip("\n"),
        ".SH COMMANDS",
    ]
    for words in COMMANDS:
        page.append(f".SS cohort {' '.join(words)}")
        page.append(roff(help_text(cohort, words)).rstrip("\n"))
    page += [".SH SEE ALSO",
             "The README and docs/ of the source tree: config.md, cluster.md, protocol.md."]
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
