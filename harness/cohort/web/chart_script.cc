#include "harness/cohort/web/chart_script.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

constexpr char kDefaultChartDir[] = "/usr/share/javascript/dygraphs";

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

const char kChartStyle[] = R"css(
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr)); gap: 12px; }
.chart-box { background: #fff; padding: 8px; border: 1px solid #e3e6ea; }
.chart-box h3 { font-size: 13px; margin: 0 0 4px; }
.chart { height: 240px; }
.legend { font-size: 12px; min-height: 18px; }
.controls { margin: 8px 0; display: flex; gap: 16px; align-items: center; }
)css";

const char kChartScript[] = R"js(
const charts = {};  // chart id -> {box, graph}, kept across refreshes so a zoom survives
const options = {logscale: false, roll: 1};

function esc(text) {
  return String(text).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                 '"': "&quot;"})[c]);
}
// The reports of several trials ([{id, label?, reports}], each report a metrics.jsonl line) as
// one chart per metric: {name: {labels, rows}}, each row [batches, value of the first trial,
// value of the second, ...] (null where a trial has none).
function series(trials) {
  const byMetric = {};
  const add = (name, trialIndex, batches, value) => {
    const entry = byMetric[name] || (byMetric[name] = new Map());
    const row = entry.get(batches) || new Array(trials.length).fill(null);
    row[trialIndex] = value;
    entry.set(batches, row);
  };
  trials.forEach((trial, i) => {
    for (const report of trial.reports) {
      const prefix = report.kind === "validation" ? "validation " : "training ";
      for (const [name, value] of Object.entries(report.metrics || {})) {
        add(prefix + name, i, report.batches, value);
      }
      if (report.kind === "training" && report.records_per_second) {
        add("records/s", i, report.batches, report.records_per_second);
      }
    }
  });
  const out = {};
  for (const name of Object.keys(byMetric).sort()) {
    const rows = [...byMetric[name].entries()].sort((a, b) => a[0] - b[0])
                                             .map(([batches, values]) => [batches, ...values]);
    out[name] = {labels: ["batches", ...trials.map(t => t.label || "trial " + t.id)], rows};
  }
  return out;
}

// Draws (or updates, keeping each chart's zoom) a chart per entry of `bySeries` in `container`;
// each chart's box says how many rows it drew (data-rows), the last row's batches (data-last) and
// how many series (data-series). Validation charts draw their points, so a trial validated once
// shows too.
function drawCharts(container, bySeries) {
  const names = Object.keys(bySeries);
  if (!names.length) { container.innerHTML = "<p>no reports yet</p>"; return; }
  for (const name of names) {
    const id = "chart-" + name.replace(/[^a-z0-9]+/gi, "-");
    let box = document.getElementById(id);
    if (!box) {
      if (container.querySelector("p")) container.innerHTML = "";
      box = document.createElement("div");
      box.className = "chart-box";
      box.id = id;
      box.innerHTML = `<h3>${esc(name)}</h3><div class="chart"></div><div class="legend"></div>`;
      container.appendChild(box);
    }
    const data = bySeries[name];
    box.dataset.rows = String(data.rows.length);
    box.dataset.last = String(data.rows.length ? data.rows[data.rows.length - 1][0] : 0);
    box.dataset.series = String(data.labels.length - 1);
    const chartOptions = {labels: data.labels, logscale: options.logscale,
                          rollPeriod: options.roll, connectSeparatedPoints: true,
                          drawPoints: data.rows.length < 60 || name.startsWith("validation"),
                          pointSize: 2, strokeWidth: 1.5,
                          legend: "always", labelsDiv: box.querySelector(".legend"),
                          labelsSeparateLines: false, xlabel: "batches",
                          axes: {y: {axisLabelWidth: 64}}};
    const entry = charts[id];
    if (entry && entry.box === box) {
      entry.graph.updateOptions(Object.assign({file: data.rows}, chartOptions));
    } else {
      charts[id] = {box, graph: new Dygraph(box.querySelector(".chart"), data.rows, chartOptions)};
    }
  }
}

function controls() {
  return `<div class="controls"><label><input type="checkbox" id="logscale"
    ${options.logscale ? "checked" : ""}> log scale</label>
    <label>smoothing <input type="range" id="roll" min="1" max="50" value="${options.roll}">
    <span id="roll-value">${options.roll}</span></label>
    <span>drag on a chart to zoom, double-click to zoom out</span></div>`;
}
function bindControls() {
  const log = document.getElementById("logscale");
  const roll = document.getElementById("roll");
  const update = change => {
    for (const entry of Object.values(charts)) entry.graph.updateOptions(change);
  };
  if (log) log.onchange = () => { options.logscale = log.checked; update({logscale: log.checked}); };
  if (roll) roll.oninput = () => {
    options.roll = Number(roll.value);
    document.getElementById("roll-value").textContent = roll.value;
    update({rollPeriod: options.roll});
  };
}
)js";

absl::StatusOr<ChartLibrary> LoadChartLibrary() {
  const char* override_dir = std::getenv("COHORT_DYGRAPHS_DIR");
  const std::string dir =
      override_dir != nullptr && *override_dir ? override_dir : kDefaultChartDir;
  absl::StatusOr<std::string> js = ReadText(dir + "/dygraph.min.js");
  absl::StatusOr<std::string> css = ReadText(dir + "/dygraph.min.css");
  if (!js.ok() || !css.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the dashboard draws its charts with dygraphs, and ", dir,
        "/dygraph.min.js or dygraph.min.css cannot be read: install Debian's libjs-dygraphs "
        "(apt install libjs-dygraphs), or set COHORT_DYGRAPHS_DIR to a folder holding them"));
  }
  return ChartLibrary{*std::move(js), *std::move(css)};
}

}  // namespace cohort
