"""The orchestrator's web dashboard, in a real browser (Debian's chromium, headless; skipped,
exit 77, where it is missing) against a real orchestrator and agent on loopback:

- the page and its JSON are served; a grid's two trials are drawn overlaid, a chart per metric
  (training, validation, records/s), each chart's rows counted by the page;
- a running trial's curve grows between two loads of the page;
- a trial's view shows its log lines and charts; the home view lists the tasks and agents, and a
  killed experiment as stopped;
- off loopback the dashboard needs a token: the orchestrator refuses to start without one, and
  with one every request without it gets 401.
Under the sanitizers the orchestrator's side is what is checked: the documents the page fetches,
read without a browser (the renders cost most of a minute there and exercise no more C++).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

from cohort_cli import *
from cluster import Cluster, free_port, two_rate_grid


def get(url, headers=None):
    """(status, body) of a GET."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def render(chromium, url):
    """The page's DOM once its script has fetched and drawn (virtual time lets it finish)."""
    result = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                             "--virtual-time-budget=3000", "--dump-dom", url],
                            capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"chromium exited {result.returncode}:\n{result.stderr[-2000:]}")
    dom = result.stdout
    check('data-refreshed="' in dom, f"the page never finished a refresh:\n{dom[-3000:]}")
    error = re.search(r'id="error">([^<]*)<', dom)
    check(error is not None and error.group(1) == "", f"the page shows an error: {error}")
    return dom


def charts(dom):
    """{chart id: (rows, series, last batch)} of the charts drawn."""
    return {m.group(1): (int(m.group(2)), int(m.group(4)), int(m.group(3))) for m in re.finditer(
        r'class="chart-box" id="([^"]+)" data-rows="(\d+)" data-last="(\d+)" data-series="(\d+)"',
        dom)}


chromium = None if SANITIZED else shutil.which("chromium") or shutil.which("chromium-browser")
if chromium is None and not SANITIZED:
    print("skipped: no chromium (apt install chromium) to load the dashboard")
    sys.exit(77)

with temp_dir() as tmp:
    web_port = free_port()
    base = f"http://127.0.0.1:{web_port}"
    with Cluster(tmp, "--web-address", str(web_port)) as cluster:
        wait_for(lambda: f"web dashboard at {base}/" in cluster.log(), 30,
                 "the dashboard to start")
        cluster.add_agent("agent-1", 2)
        experiment = cluster.submit(two_rate_grid(tmp, "dashboard-<b>grid</b>", batches=4_000_000,
                                                  validation_period=2000, scheduling_unit=100))
        wait_for(lambda: json.loads(get(f"{base}/api/experiments")[1]), 30,
                 "the experiment in /api/experiments")
        status, page = get(base + "/")
        check(status == 200 and "new Dygraph(" in page and ".Dygraph=" in page,
              "the page does not carry dygraphs inline")
        check(not re.search(r'\b(src|href)\s*=\s*"(https?:)?//', page),
              "the page loads something from elsewhere")

        def trials_reported():
            described = json.loads(get(f"{base}/api/experiments/{experiment}")[1])
            return len(described["trials"]) == 2 and all(
                len(json.loads(get(f"{base}/api/trials/{t['id']}/metrics")[1])) >= 3
                for t in described["trials"])
        wait_for(trials_reported, 60, "training reports of both trials")

        if chromium is not None:
            first = charts(render(chromium, f"{base}/#/experiments/{experiment}"))
            for name in ("chart-training-loss", "chart-training-accuracy", "chart-records-s"):
                check(name in first and first[name][1] == 2,
                      f"{name}: not two trials overlaid: {first}")
            # Once a validation has been reported, the page drawn again shows grown training
            # curves and a validation chart.
            wait_for(lambda: any(row["kind"] == "validation" for t in json.loads(
                get(f"{base}/api/experiments/{experiment}")[1])["trials"] for row in json.loads(
                    get(f"{base}/api/trials/{t['id']}/metrics")[1])), 60, "a validation report")
            dom = render(chromium, f"{base}/#/experiments/{experiment}")
            second = charts(dom)
            check(second["chart-training-loss"][2] > first["chart-training-loss"][2],
                  f"the running trials' curve did not grow: {first} then {second}")
            check("chart-validation-accuracy" in second, f"no validation chart: {second}")
            check("dashboard-&lt;b&gt;grid&lt;/b&gt;" in dom, "the experiment's name is not text")

            trial = json.loads(get(f"{base}/api/experiments/{experiment}")[1])["trials"][0]["id"]
            dom = render(chromium, f"{base}/#/trials/{trial}")
            check("[cohort] training after" in dom, "the trial's log lines are not shown")
            check(charts(dom).get("chart-training-loss", (0, 0))[1] == 1, charts(dom))
            dom = render(chromium, base + "/")
            check(re.search(r'<td class="state-running">running</td>', dom),
                  "no running task shown")
            check("agent-1" in dom, "the agent is not listed")
        else:
            # What the page fetches: each document is JSON, the trials' metrics grow.
            described = json.loads(get(f"{base}/api/experiments/{experiment}")[1])
            for trial in described["trials"]:
                before = len(json.loads(get(f"{base}/api/trials/{trial['id']}/metrics")[1]))
                wait_for(lambda: len(json.loads(get(
                    f"{base}/api/trials/{trial['id']}/metrics")[1])) > before, 60,
                    f"trial {trial['id']}'s metrics to grow")
                status, body = get(f"{base}/api/trials/{trial['id']}")
                check(status == 200 and json.loads(body)["trial"]["id"] == trial["id"], body)
                status, body = get(f"{base}/api/trials/{trial['id']}/logs")
                check(status == 200 and "[cohort] training after" in body,
                      f"trial {trial['id']}'s log: {status} {body[-500:]}")
            for path in ("/api/tasks", "/api/agents"):
                status, body = get(base + path)
                check(status == 200 and json.loads(body), f"{path}: {status} {body}")

        cluster.must("experiment", "kill", str(experiment))
        check(cluster.wait_ended(experiment) == "stopped", cluster.logs())
        if chromium is not None:
            wait_for(lambda: re.search(r'<td class="state-stopped">stopped</td>',
                                       render(chromium, base + "/")), 30,
                     "the killed experiment shown as stopped")
        status, body = get(f"{base}/api/trials/999/metrics")
        check(status == 404, f"{status} {body}")
        # An ended experiment's own view follows its archiving, as the list does.
        wait_for(lambda: json.loads(get(f"{base}/api/experiments/{experiment}")[1])["state"]
                 == "stopped", 30, "the experiment's view to show it stopped")
        cluster.must("experiment", "archive", str(experiment))
        wait_for(lambda: json.loads(get(f"{base}/api/experiments/{experiment}")[1])["archived"],
                 30, "the archived experiment's view to say so")

    # Off loopback: a token is required, and asked of every request.
    state = os.path.join(tmp, "state-2")
    code, out, err = run("orchestrator", "--listen", f"tcp://127.0.0.1:{free_port()}",
                         "--client-listen", f"tcp://127.0.0.1:{free_port()}",
                         "--state-dir", state, "--web-address", f"0.0.0.0:{free_port()}",
                         timeout=30)
    check(code == 2 and "is not on loopback: give --web-token-file" in err, f"{code}\n{err}")
    token_file = os.path.join(tmp, "web.token")
    with open(token_file, "w") as f:
        f.write("s3cret-token-of-enough-length\n")
    web_port = free_port()
    orchestrator = subprocess.Popen(
        [COHORT, "orchestrator", "--listen", f"tcp://127.0.0.1:{free_port()}", "--client-listen",
         f"tcp://127.0.0.1:{free_port()}", "--rendezvous-listen",
         f"tcp://127.0.0.1:{free_port()}", "--state-dir", state,
         "--web-address", f"0.0.0.0:{web_port}", "--web-token-file", token_file],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{web_port}"
        wait_for(lambda: get(base + "/")[0] == 401, 30, "the token-guarded dashboard")
        check(get(base + "/api/experiments")[0] == 401, "an API request without the token")
        check(get(base + "/api/experiments?token=wrong")[0] == 401, "a wrong token")
        wait_for(lambda: get(base + "/api/experiments?token=s3cret-token-of-enough-length")
                 == (200, "[]"), 30, "the API with the token")
        check(get(base + "/api/experiments",
                  {"Authorization": "Bearer s3cret-token-of-enough-length"}) == (200, "[]"),
              "a bearer token")
    finally:
        orchestrator.terminate()
        orchestrator.wait(timeout=30)
    print("dashboard: pages drawn in chromium, curves grow, a killed experiment stopped, "
          "tokens asked off loopback: ok")
