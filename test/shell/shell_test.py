"""What a shell gets: bash completion of commands, subcommands, abbreviations and each command's
options (read from its --help), with every command `cohort --help` lists; and cohort(1), generated
from the --help texts, with a section per command.

Usage: shell_test.py COHORT COMPLETION MAN_PAGE ("-" when the build made none)
"""
import os
import re
import subprocess
import sys


def fail(message):
    sys.exit("FAIL: " + message)


def complete(cohort, completion, words):
    """What bash completes for the command line WORDS (the last one being typed)."""
    script = (f"source {completion}\n"
              f"COMP_WORDS=({' '.join(repr(w) for w in [cohort, *words])})\n"
              f"COMP_CWORD={len(words)}\n"
              "_cohort\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        fail(f"completing {words}: {done.stderr}")
    return [line for line in done.stdout.split("\n") if line]


def main():
    cohort, completion, man_page = sys.argv[1:4]
    usage = subprocess.run([cohort, "--help"], capture_output=True, text=True).stdout
    listed = set(re.findall(r"^  ([a-z]+) ", usage, re.M))
    offered = set(complete(cohort, completion, [""]))
    if not listed <= offered:
        fail(f"commands `cohort --help` lists but completion lacks: {sorted(listed - offered)}")

    # Every subcommand a group's --help lists is offered after the group's name.
    for group in ("experiment", "trial", "task", "checkpoint"):
        text = subprocess.run([cohort, group, "--help"], capture_output=True, text=True).stdout
        subcommands = set(re.findall(r"^  ([a-z]+) ", text, re.M))
        got = set(complete(cohort, completion, [group, ""]))
        if not subcommands or not subcommands <= got:
            fail(f"`cohort {group} <TAB>`: --help lists {sorted(subcommands)}, completion offers "
                 f"{sorted(got)}")

    cases = [
        (["exp"], ["experiment"]),
        (["e", "d"], ["delete", "describe"]),
        (["c", ""], ["export", "list", "ls"]),
        (["experiment", "des"], ["describe"]),
        (["plugin", ""], ["check", "info"]),
    ]
    for words, expected in cases:
        got = sorted(complete(cohort, completion, words))
        if got != expected:
            fail(f"completing {words}: expected {expected}, got {got}")
    run_options = complete(cohort, completion, ["run", "--"])
    for option in ("--set", "--output", "--resume", "--gpus"):
        if option not in run_options:
            fail(f"`cohort run --<TAB>` lacks {option}: {run_options}")
    describe_options = complete(cohort, completion, ["e", "describe", "--"])
    if "--json" not in describe_options:
        fail(f"`cohort e describe --<TAB>` lacks --json: {describe_options}")
    print(f"completion: {len(offered)} commands, options read from --help")

    if man_page == "-":
        print("no man page in this build")
        return
    with open(man_page, encoding="utf-8") as f:
        page = f.read()
    for needed in (".TH COHORT 1", ".SH COMMANDS", ".SS cohort run", ".SS cohort experiment list",
                   ".SS cohort trial logs", ".SS cohort experiment pause",
                   ".SS cohort checkpoint export", "--set KEY=VALUE", "--json"):
        if needed not in page:
            fail(f"cohort.1 lacks '{needed}'")
    print(f"cohort.1: {page.count('.SS ')} command sections")


if __name__ == "__main__":
    main()
