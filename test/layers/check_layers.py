"""Checks that the runtime's components include one another only as runtime/LAYERS allows: each
component only components listed above it, and only those its line names; and that no source file
of runtime/ or harness/ passes MAX_LINES lines (split it by concern). Prints every include that
breaks the rule (file, line, what it includes) and every file too long, and exits 1; exits 0 when
none does.

    python3 test/layers/check_layers.py SOURCE_ROOT
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"runtime/([A-Za-z0-9_]+)/')
SOURCES = (".h", ".cc", ".c", ".cu", ".cuh")
MAX_LINES = 500


def read_layers(path):
    """The components in order and the set each may include; errors for a malformed file."""
    order, allowed, errors = [], {}, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, colon, rest = line.partition(":")
            name = name.strip()
            if not colon or not name or name in allowed:
                errors.append(f"{path}:{number}: expected 'component: dependencies', once each")
                continue
            deps = set(rest.split())
            for dep in sorted(deps - set(order)):
                errors.append(f"{path}:{number}: {name} may not include {dep}: "
                              f"{dep} is not listed above it")
            order.append(name)
            allowed[name] = deps
    return order, allowed, errors


def sources(folder):
    """The path of every source file below `folder`, in a stable order."""
    for directory, subfolders, files in os.walk(folder):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(SOURCES):
                yield os.path.join(directory, name)


def too_long(root, folders):
    """A line per source file under `folders` longer than MAX_LINES."""
    errors = []
    for folder in folders:
        for path in sources(os.path.join(root, folder)):
            with open(path, errors="replace") as f:
                lines = sum(1 for _ in f)
            if lines > MAX_LINES:
                errors.append(f"{os.path.relpath(path, root)}: {lines} lines, more than "
                              f"{MAX_LINES}: split it by concern")
    return errors


def main(root):
    runtime = os.path.join(root, "runtime")
    order, allowed, errors = read_layers(os.path.join(runtime, "LAYERS"))
    folders = sorted(d for d in os.listdir(runtime) if os.path.isdir(os.path.join(runtime, d)))
    for folder in folders:
        if folder not in allowed:
            errors.append(f"runtime/{folder}/ is not listed in runtime/LAYERS")
            continue
        for path in sources(os.path.join(runtime, folder)):
            with open(path, errors="replace") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match or match.group(1) in allowed[folder] | {folder}:
                        continue
                    errors.append(f"{os.path.relpath(path, root)}:{number}: {folder} includes "
                                  f"{match.group(1)}, which runtime/LAYERS does not allow")
    errors += too_long(root, ("runtime", "harness"))
    for error in errors:
        print(error)
    print(f"{len(order)} components, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
