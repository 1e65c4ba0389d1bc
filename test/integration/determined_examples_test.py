"""Configs in the shape of Determined's mnist_pytorch examples (test/config/testdata: const,
adaptive with adaptive_asha over 16 trials, distributed on 8 slots) run to completion under
`cohort run` with only the entrypoint (already the mlp example there) and the searcher's metric
changed to the one the plugin reports (`loss`), and for distributed the checkpoint folder, which
names a machine's mount. cifar10_adaptive.yaml (the batch size searched) is loaded by the config
tests; it trains for hours, so it does not run here."""
import os

from cohort_cli import *

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config", "testdata")

with temp_dir() as tmp:
    cases = [
        ("const", []),
        ("adaptive", ["--cpu-slots", "2"]),
        ("distributed", ["--cpu-slots", "8", "--set",
                         f"checkpoint_storage.host_path={os.path.join(tmp, 'checkpoints')}"]),
    ]
    for name, extra in cases:
        folder = os.path.join(tmp, name)
        code, out, err = run("run", os.path.join(TESTDATA, name + ".yaml"), "--output", folder,
                             "--set", "searcher.metric=loss", *extra, timeout=600)
        check(code == 0, f"{name}.yaml exited {code}:\n{out[-3000:]}\n{err[-3000:]}")
        record = experiment(folder)
        check(record["state"] == "COMPLETED", f"{name}.yaml: {record['state']}")
        trials = record["trials"]
        check(trials and all(t["state"] in ("COMPLETED", "STOPPED") for t in trials),
              f"{name}.yaml: {[t['state'] for t in trials]}")
        check(any(t["best_validation"] for t in trials), f"{name}.yaml: nothing validated")
        print(f"{name}.yaml: {len(trials)} trial(s) completed")
