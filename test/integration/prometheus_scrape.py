"""Reading a Prometheus text page served at http://127.0.0.1:PORT/metrics, for the tests that
check the orchestrator's and the agent's pages."""
import re
import urllib.request

from cohort_cli import check

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')


def scrape(port):
    """{(name, frozenset of (label, value)): value} from http://127.0.0.1:PORT/metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        check(response.headers["Content-Type"].startswith("text/plain; version=0.0.4"),
              response.headers["Content-Type"])
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            check(not line or line.startswith("# HELP ") or line.startswith("# TYPE "), line)
            continue
        match = SAMPLE.match(line)
        check(match is not None, f"not a sample line: {line!r}")
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(3) or ""))
        samples[(match.group(1), labels)] = float(match.group(4))
    return samples


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))
