"""`cohort report`: one self-contained HTML page about run folders, rendered in headless Chromium
(Debian's chromium package; skipped, exit 77, where it is missing). Two runs of one experiment,
at 1 and 2 slots: every chart is drawn with a line per trial, the scaling table gives the 2-slot
run an efficiency against the 1-slot one, names are shown as text (a name holding </script>
breaks nothing), and the page loads nothing from elsewhere. A folder that is not a run is
refused by name."""
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

    page = os.path.join(tmp, "report.html")
    code, out, err = run("report", one, two, "--output", page)
    check(code == 0 and f"report: {page}" in out, f"report failed ({code}):\n{out}\n{err}")
    html = read_bytes(page).decode()
    check(not re.search(r'\b(src|href)\s*=', html), "the page refers to another file")
    check(re.findall(r"https?://[^\s\"'<>]+", html) == ["http://www.w3.org/2000/svg"],
          "the page names an address other than the SVG namespace")
    code, out, err = run("report", one)
    check(code == 0 and os.path.exists(os.path.join(one, "report.html")), f"{out}\n{err}")
    code, out, err = run("report", tmp)
    check(code == 1 and tmp in err, f"a folder without a run: exit {code}\n{err}")

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("skipped: no chromium (apt install chromium) to render the report")
        sys.exit(77)
    result = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                             "--dump-dom", f"file://{page}"],
                            capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"chromium exited {result.returncode}:\n{result.stderr[-2000:]}")
    dom = result.stdout
    charts = re.findall(r'<svg class="chart"[^>]*>.*?</svg>', dom, re.S)
    # Per run: training loss, validation loss and accuracy, records/s.
    check(len(charts) == 8, f"{len(charts)} charts drawn:\n{dom[:3000]}")
    check(f'data-rendered="{len(charts)}"' in dom, "the script did not finish")
    for chart in charts:
        title = re.search(r'data-title="([^"]*)"', chart).group(1)
        check('data-lines="1"' in chart, f"chart {title}: not one line per trial")
        points = re.search(r'<polyline[^>]*points="([^"]*)"', chart).group(1).split()
        check(len(points) >= 2, f"chart {title}: {points}")
        for point in points:
            x, y = (float(v) for v in point.split(","))
            check(0 <= x <= 460 and 0 <= y <= 280, f"chart {title}: point {point} off the chart")
    check("scaling &lt;/script&gt;&lt;b&gt;test" in dom, "the experiment name is not shown as text")
    rows = re.findall(r"<tr>(.*?)</tr>", dom[dom.index(">Scaling<"):], re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows[1:]]
    check([c[2] for c in cells] == ["1", "2"], cells)
    check(cells[0][5] == "1", f"the 1-slot run is its own baseline: {cells[0]}")
    efficiency = float(cells[1][5])
    check(0 < efficiency < 2, f"2-slot efficiency {efficiency}")
print(f"ok ({len(charts)} charts drawn; 2-slot scaling efficiency {efficiency})")
