"""Every runtime module loads into every binary that loads modules, as that binary loads it.

Usage: module_load_test.py PROBE BINARY...

PROBE is the runtime module probe (runtime_module_probe.cc), preloaded into each BINARY with
COHORT_RUNTIME_MODULE_PROBE=1: before the binary's main() it opens every module with RTLD_NOW
against the binary's own exported symbols and libraries, and exits 0 when all load. A module that
needs something its hosts do not provide fails here, on a machine without a GPU, and the output
names the missing symbol. Needs no device: only the CUDA libraries the modules link.
"""
import os
import subprocess
import sys


def main():
    probe, binaries = sys.argv[1], sys.argv[2:]
    failures = []
    for binary in binaries:
        env = dict(os.environ, LD_PRELOAD=probe, COHORT_RUNTIME_MODULE_PROBE="1")
        # A module path set in the environment would bypass the build's own modules.
        for variable in ("COHORT_CUDA_MEMORY_MODULE", "COHORT_NCCL_MODULE",
                         "COHORT_CUDA_EXCHANGE_MODULE", "COHORT_CUDA_OPTIMIZER_MODULE"):
            env.pop(variable, None)
        done = subprocess.run([binary], env=env, capture_output=True, text=True, timeout=120)
        name = os.path.basename(binary)
        print(f"{name} (exit {done.returncode}):")
        for line in done.stdout.splitlines():
            print(f"  {line}")
        if done.stderr.strip():
            print("  stderr: " + done.stderr.strip().replace("\n", "\n  "))
        if done.returncode != 0:
            failures.append(name)
        elif "module" not in done.stdout:
            # The probe did not run: the binary's main() did, so nothing was checked.
            failures.append(f"{name} (the probe did not run)")
    if failures:
        sys.exit("runtime modules do not load into: " + ", ".join(failures))
    print(f"every runtime module loads into all {len(binaries)} binaries")


if __name__ == "__main__":
    main()
