"""`cohort report`: one self-contained HTML page about run folders, rendered in headless Chromium
(Debian's chromium package; skipped, exit 77, where it is missing). Two runs of one experiment,
at 1 and 2 slots, and a third whose trial validated only once: a chart per metric is drawn by
dygraphs (inlined) with every run's trial overlaid, the one validated once included, the 2-slot
run's ranks get their straggler scores, the scaling table gives the 2-slot run an efficiency
against the 1-slot one (the run that trains the same, not the third, of other hyperparameters), names are shown as text (a name holding </script> breaks nothing), and the page loads
nothing from elsewhere. A folder that is not a run is refused by name."""
import os
import re
import shutil
import subprocess
import sys

from cohort_cli import *

NAME = "scaling </script><b>test"

with temp_dir() as tmp:
    config = write_config(tmp, read_bytes(mlp_config(tmp, batches=300, period=100)).decode()
                          .replace("name: mlp-test", f"name: '{NAME}'"), file_name="named.yaml")
    one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
    code, out, err = run("run", config, "--output", one)
    check(code == 0, f"1-slot run failed:\n{out}\n{err}")
    code, out, err = run("run", config, "--output", two, "--cpu-slots", "2",
                         "--set", "resources.slots_per_trial=2")
    check(code == 0, f"2-slot run failed:\n{out}\n{err}")
    # A run whose trial validated once, at its end (as most trials of an ASHA search): drawn too.
    once = os.path.join(tmp, "once")
    # Its hyperparameters hold a long text, which must not push the tables past the page.
    code, out, err = run("run", config, "--output", once,
                         "--set", "min_validation_period={batches: 300}",
                         "--set", "hyperparameters.notes=" + "wide" * 150)
    check(code == 0, f"run validating once failed:\n{out}\n{err}")

    page = os.path.join(tmp, "report.html")
    code, out, err = run("report", one, two, once, "--output", page)
    check(code == 0 and f"report: {page}" in out, f"report failed ({code}):\n{out}\n{err}")
    html = read_bytes(page).decode()
    check(not re.search(r'\b(src|href)\s*=\s*["\']?(https?:)?//', html),
          "the page refers to another file")
    check(set(re.findall(r"https?://[^\s\"'<>]+", html)) <=
          {"https://github.com/danvk/dygraphs/blob/v2.2.1/LICENSE.txt"},
          "the page names an address other than dygraphs' licence")
    # Each run's scaling baseline is the 1-slot run that trains the same, as the orchestrator's
    # is: the 2-slot run's is the 1-slot one, not the run of other hyperparameters beside it.
    fingerprints = re.findall(r'"one_slot_fingerprint":\s*"([0-9a-f]+)"', html)
    check(len(fingerprints) == 3 and fingerprints[0] == fingerprints[1] != fingerprints[2],
          f"the runs' one-slot fingerprints: {fingerprints}")
    code, out, err = run("report", one)
    check(code == 0 and os.path.exists(os.path.join(one, "report.html")), f"{out}\n{err}")
    code, out, err = run("report", tmp)
    check(code == 1 and tmp in err, f"a folder without a run: exit {code}\n{err}")

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("skipped: no chromium (apt install chromium) to render the report")
        sys.exit(77)
    result = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                             "--window-size=1400,900", "--dump-dom", f"file://{page}"],
                            capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"chromium exited {result.returncode}:\n{result.stderr[-2000:]}")
    dom = result.stdout
    charts = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r'class="chart-box" id="([^"]+)" data-rows="(\d+)" data-last="\d+" data-series="(\d+)"',
        dom)}
    # Training loss and accuracy, validation loss and accuracy, records/s: the runs overlaid, the
    # trial validated once among them.
    for name in ("chart-training-loss", "chart-training-accuracy", "chart-validation-loss",
                 "chart-validation-accuracy", "chart-records-s"):
        check(name in charts and charts[name][1] == 3, f"{name}: {charts}")
        check(charts[name][0] >= 2, f"{name}: fewer than 2 rows: {charts}")
    check(f'data-rendered="{len(charts)}"' in dom, "the script did not finish")
    check('data-overflow="0"' in dom, "a table runs past the page: " +
          str(re.search(r'data-overflow="[^"]*"', dom)))
    check(len(re.findall(r'<canvas', dom)) >= len(charts), "dygraphs drew no canvas")
    check("scaling &lt;/script&gt;&lt;b&gt;test" in dom, "the experiment name is not shown as text")
    # The 2-slot run's straggler scores: a row per rank, rank 0 and rank 1 of its trial.
    paces = dom[dom.index(">Ranks' pace (straggler scores"):]
    pace_rows = [re.findall(r"<td[^>]*>(.*?)</td>", row)
                 for row in re.findall(r"<tr>(.*?)</tr>", paces[:paces.index("</table>")], re.S)]
    check([row[:2] for row in pace_rows[1:]] == [["1", "0"], ["1", "1"]], pace_rows)
    check(dom.count(">Ranks' pace (straggler scores") == 1, "scores for a 1-slot run")
    rows = re.findall(r"<tr>(.*?)</tr>", dom[dom.index(">Scaling<"):], re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows[1:]]
    check([c[2] for c in cells] == ["1", "2", "1"], cells)
    check(cells[0][5] == "1", f"the 1-slot run is its own baseline: {cells[0]}")
    efficiency = float(cells[1][5])
    check(0 < efficiency < 2, f"2-slot efficiency {efficiency}")
print(f"ok ({len(charts)} charts drawn; 2-slot scaling efficiency {efficiency})")
