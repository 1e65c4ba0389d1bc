"""The protocols' versions agree wherever they are written: the constants the code speaks
(runtime/control/control_messages.h, runtime/client/client_messages.h) against the schemas'
comments (schemas/control.fbs, schemas/client.fbs), schemas/README.md and docs/protocol.md.

Usage: check_protocol_versions.py SOURCE_ROOT
"""
import os
import re
import sys


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def constant(root, header, name):
    found = re.search(rf"{name} = (\d+);", read(root, header))
    if found is None:
        sys.exit(f"{header}: no {name}")
    return int(found.group(1))


def main():
    root = sys.argv[1]
    protocols = {
        "control": (constant(root, "runtime/control/control_messages.h", "kControlProtocolMajor"),
                    constant(root, "runtime/control/control_messages.h", "kControlProtocolMinor")),
        "client": (constant(root, "runtime/client/client_messages.h", "kClientProtocolMajor"),
                   constant(root, "runtime/client/client_messages.h", "kClientProtocolMinor")),
    }
    problems = []
    readme = read(root, "schemas/README.md")
    protocol_md = read(root, "docs/protocol.md")
    # docs/protocol.md gives each envelope's protocol_minor in its field table, control first.
    documented = [int(m) for m in re.findall(r"\| `protocol_minor` \| ushort \| (\d+)", protocol_md)]
    for index, (name, (major, minor)) in enumerate(protocols.items()):
        schema = read(root, f"schemas/{name}.fbs")
        said = re.search(r"protocol_major is (\d+) and protocol_minor (\d+)", schema)
        if said is None or (int(said.group(1)), int(said.group(2))) != (major, minor):
            problems.append(f"schemas/{name}.fbs's header says "
                            f"{said.group(0) if said else 'no version'}; the code speaks "
                            f"{major}.{minor}")
        field = re.search(r"protocol_minor:ushort;\s*// (\d+)", schema)
        if field is None or int(field.group(1)) != minor:
            problems.append(f"schemas/{name}.fbs's protocol_minor field says "
                            f"{field.group(1) if field else 'nothing'}; the code speaks {minor}")
        bullet = re.search(rf"- `{name}.fbs`:.*?`protocol_major` (\d+) / `protocol_minor` (\d+)",
                           readme, re.S)
        if bullet is None or (int(bullet.group(1)), int(bullet.group(2))) != (major, minor):
            problems.append(f"schemas/README.md gives {name} "
                            f"{bullet.group(1) + '.' + bullet.group(2) if bullet else 'no version'}"
                            f"; the code speaks {major}.{minor}")
        if index >= len(documented) or documented[index] != minor:
            problems.append(f"docs/protocol.md's {name} envelope says protocol_minor "
                            f"{documented[index] if index < len(documented) else 'nothing'}; "
                            f"the code speaks {minor}")
    if problems:
        sys.exit("protocol versions disagree:\n  " + "\n  ".join(problems))
    print("protocol versions agree: " +
          ", ".join(f"{name} {major}.{minor}" for name, (major, minor) in protocols.items()))


if __name__ == "__main__":
    main()
