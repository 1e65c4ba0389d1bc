#include "harness/cohort/web/dashboard_page.h"

#include "absl/strings/str_replace.h"
#include "harness/cohort/web/chart_script.h"

namespace cohort {
namespace {

// The page: plain DOM and fetch, its charts drawn by dygraphs. Hash routes: #/ (experiments,
// tasks, agents), #/experiments/ID (its trials and a chart per metric, trials overlaid),
// #/trials/ID (its charts, validations, checkpoints and the tail of its log). Every view
// refreshes every 2 s; each chart's container says how many rows it drew (data-rows), for how
// many series (data-series), and the last row's batches (data-last).
constexpr char kPage[] = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Cohort</title>
<style>@CHART_CSS@</style>
<style>@CHART_STYLE@</style>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d232a; background: #f6f7f9; }
header { background: #243447; color: #fff; padding: 8px 16px; display: flex; gap: 16px;
         align-items: baseline; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
main { padding: 12px 16px; }
h2 { font-size: 16px; margin: 18px 0 6px; }
table { border-collapse: collapse; background: #fff; width: 100%; table-layout: auto; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e3e6ea;
         vertical-align: top; }
th { background: #eef1f4; font-weight: 600; white-space: nowrap; }
td.wrap { word-break: break-word; overflow-wrap: anywhere; max-width: 420px;
          font-family: ui-monospace, monospace; font-size: 12px; }
.state-active, .state-running { color: #1f6feb; } .state-completed { color: #1a7f37; }
.state-error { color: #cf222e; } .state-stopped, .state-paused, .state-stopping { color: #9a6700; }
pre.log { background: #0d1117; color: #e6edf3; padding: 8px; max-height: 420px; overflow: auto;
          font-size: 12px; }
#error { color: #cf222e; }
</style></head>
<body>
<header><a href="#/">Cohort</a><span id="where"></span><span id="error"></span></header>
<main id="view">loading...</main>
<script>@CHART_JS@</script>
<script>
"use strict";
@CHART_SCRIPT@
const token = new URLSearchParams(location.search).get("token");

function api(path) {
  const url = path + (token ? "?token=" + encodeURIComponent(token) : "");
  return fetch(url, {cache: "no-store"}).then(r => {
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  });
}
function fmt(value) {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number") return Number.isInteger(value) ? String(value)
                                                                  : value.toPrecision(5);
  return esc(value);
}
function stateCell(state) { return `<td class="state-${esc(state)}">${esc(state)}</td>`; }
function table(head, rows) {
  return `<table><tr>${head.map(h => `<th>${esc(h)}</th>`).join("")}</tr>` +
         rows.map(r => `<tr>${r.join("")}</tr>`).join("") + "</table>";
}
function cell(value, cls) { return `<td${cls ? ` class="${cls}"` : ""}>${value}</td>`; }
function when(unix) { return unix ? new Date(unix * 1000).toLocaleString() : "-"; }

async function home() {
  const [experiments, tasks, agents] =
      await Promise.all([api("/api/experiments"), api("/api/tasks"), api("/api/agents")]);
  document.getElementById("where").textContent = "experiments";
  const view = document.getElementById("view");
  view.innerHTML = "<h2>experiments</h2>" + table(
      ["id", "name", "state", "searcher", "progress", "trials (active/completed/stopped/errored)",
       "submitted"],
      experiments.map(e => [cell(`<a href="#/experiments/${e.id}">${e.id}</a>`), cell(esc(e.name)),
                            stateCell(e.state + (e.archived ? " (archived)" : "")),
                            cell(esc(e.searcher)), cell(Math.floor(e.progress * 100) + "%"),
                            cell(`${e.trial_counts.active}/${e.trial_counts.completed}/` +
                                 `${e.trial_counts.stopped}/${e.trial_counts.errored}`),
                            cell(when(e.submitted_unix_time))])) +
      "<h2>tasks</h2>" + table(
      ["task", "experiment", "trial", "slots", "state", "agents", "reason"],
      tasks.map(t => [cell(t.id), cell(`<a href="#/experiments/${t.experiment_id}">` +
                                       `${t.experiment_id}</a>`),
                      cell(`<a href="#/trials/${t.trial_id}">${t.trial_id}</a>`), cell(t.slots),
                      stateCell(t.state), cell(esc(t.agents.join(", "))),
                      cell(esc(t.reason), "wrap")])) +
      "<h2>agents</h2>" + table(
      ["agent", "host", "slots", "busy", "connected", "tasks"],
      agents.map(a => [cell(esc(a.id)), cell(esc(a.hostname)), cell(a.slots),
                       cell(a.busy_slots), cell(a.connected ? "yes" : "no"),
                       cell(a.task_ids.join(", "))]));
}

async function experimentView(id) {
  const description = await api(`/api/experiments/${id}`);
  const trials = await Promise.all(description.trials.map(
      t => api(`/api/trials/${t.id}/metrics`).then(reports => ({id: t.id, reports}))));
  document.getElementById("where").textContent =
      `experiment ${description.id}: ${description.name}`;
  const view = document.getElementById("view");
  if (!document.getElementById("experiment-charts") ||
      view.dataset.experiment !== String(id)) {
    view.dataset.experiment = String(id);
    view.innerHTML = `<div id="summary"></div>${controls()}<div id="experiment-charts"
        class="charts"></div><h2>trials</h2><div id="trials"></div>`;
    bindControls();
  }
  document.getElementById("summary").innerHTML = table(
      ["state", "searcher", "metric", "progress", "trials", "slots per trial", "error"],
      [[stateCell(description.state), cell(esc(description.searcher)),
        cell(esc(description.metric) + (description.smaller_is_better ? " (smaller is better)"
                                                                      : " (larger is better)")),
        cell(Math.floor(description.progress * 100) + "%"), cell(description.trial_counts.total),
        cell(description.slots_per_trial), cell(esc(description.error), "wrap")]]);
  document.getElementById("trials").innerHTML = table(
      ["trial", "state", "batches", "restarts", "best metric", "records/s", "checkpoint",
       "hyperparameters", "error"],
      description.trials.map(t => [
          cell(`<a href="#/trials/${t.id}">${t.id}</a>`), stateCell(t.state),
          cell(`${t.batches_trained}/${t.target_batches}`), cell(t.restarts),
          cell(fmt(t.best_metric)), cell(fmt(Math.round(t.records_per_second))),
          cell(esc(t.latest_checkpoint || "-")), cell(esc(JSON.stringify(t.hyperparameters)), "wrap"),
          cell(esc(t.error), "wrap")]));
  drawCharts(document.getElementById("experiment-charts"), series(trials));
}

async function trialView(id) {
  const [description, reports, log] = await Promise.all(
      [api(`/api/trials/${id}`), api(`/api/trials/${id}/metrics`), api(`/api/trials/${id}/logs`)]);
  const trial = description.trial;
  document.getElementById("where").innerHTML =
      `<a href="#/experiments/${description.experiment_id}">experiment ` +
      `${description.experiment_id}</a> / trial ${trial.id}`;
  const view = document.getElementById("view");
  if (!document.getElementById("trial-charts") || view.dataset.trial !== String(id)) {
    view.dataset.trial = String(id);
    view.innerHTML = `<div id="summary"></div>${controls()}<div id="trial-charts"
        class="charts"></div><div id="gpus"></div><h2>checkpoints</h2><div id="checkpoints"></div>
        <h2>log (last lines)</h2><pre class="log" id="log"></pre>`;
    bindControls();
  }
  document.getElementById("summary").innerHTML = table(
      ["state", "batches", "restarts", "best metric", "hyperparameters", "error"],
      [[stateCell(trial.state), cell(`${trial.batches_trained}/${trial.target_batches}`),
        cell(trial.restarts), cell(fmt(trial.best_metric)),
        cell(esc(JSON.stringify(trial.hyperparameters)), "wrap"), cell(esc(trial.error), "wrap")]]);
  const gpus = trial.latest_gpus || [];
  document.getElementById("gpus").innerHTML = gpus.length ? "<h2>GPUs (latest report)</h2>" +
      table(["rank", "GPU", "name", "busy", "memory"],
            gpus.map(g => [cell(g.rank), cell(g.gpu), cell(esc(g.name)),
                           cell(Math.round(g.utilization) + "%"),
                           cell(`${(g.memory_used / 2 ** 30).toFixed(1)} of ` +
                                `${(g.memory_total / 2 ** 30).toFixed(1)} GiB`)])) : "";
  document.getElementById("checkpoints").innerHTML = table(
      ["checkpoint", "batches", "metric", "bytes", "path"],
      description.checkpoints.map(c => [cell(esc(c.id)), cell(c.batches),
                                        cell(fmt(c.searcher_metric)), cell(c.bytes),
                                        cell(esc(c.path), "wrap")]));
  const logBox = document.getElementById("log");
  const atBottom = logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 4;
  logBox.textContent = log.join("\n");
  if (atBottom) logBox.scrollTop = logBox.scrollHeight;
  drawCharts(document.getElementById("trial-charts"), series([{id: trial.id, reports}]));
}

let refreshing = false;
async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const route = location.hash.replace(/^#\/?/, "").split("/");
    if (route[0] === "experiments" && route[1]) await experimentView(route[1]);
    else if (route[0] === "trials" && route[1]) await trialView(route[1]);
    else await home();
    document.getElementById("error").textContent = "";
    document.body.dataset.refreshed = String(Date.now());
  } catch (error) {
    document.getElementById("error").textContent = String(error.message || error);
  } finally {
    refreshing = false;
  }
}
window.addEventListener("hashchange", () => {
  for (const key of Object.keys(charts)) delete charts[key];
  document.getElementById("view").innerHTML = "loading...";
  refresh();
});
refresh();
setInterval(refresh, 2000);
</script></body></html>
)HTML";

}  // namespace

std::string DashboardPage(const ChartLibrary& charts) {
  // The library's text may hold "</script>" only escaped; dygraphs' minified build has none.
  return absl::StrReplaceAll(kPage, {{"@CHART_JS@", charts.js},
                                     {"@CHART_CSS@", charts.css},
                                     {"@CHART_SCRIPT@", kChartScript},
                                     {"@CHART_STYLE@", kChartStyle}});
}

}  // namespace cohort
