#include "harness/cohort/report/report_page.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "harness/cohort/web/chart_script.h"

namespace cohort {
namespace {

constexpr char kStyle[] = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f3f3f3; } td.text { text-align: left; font-family: monospace; }
td.wrap { word-break: break-word; overflow-wrap: anywhere; max-width: 420px; }
.note { color: #666; }
)css";

// The page's own script, after the shared chart script (chart_script.h): one chart per metric
// with every trial of every run overlaid (a series per trial, named by its run folder), then per
// run its trials and where the time went, then the scaling table.
constexpr char kScript[] = R"js(
const data = JSON.parse(document.getElementById('report-data').textContent);

function add(parent, tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  parent.appendChild(node);
  return node;
}

function format(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '';
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude >= 1e5 || magnitude < 1e-3)) return value.toExponential(2);
  return String(Number(value.toPrecision(4)));
}

function median(values) {
  const sorted = values.filter(v => typeof v === 'number').sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function trialRate(trial) {
  const rates = trial.training.map(r => r.records_per_second).filter(v => v > 0);
  return median(rates.length >= 3 ? rates.slice(1) : rates);  // the first includes warm-up
}

// A table; the cells of `textColumns` are text, left-aligned and wrapped.
function table(parent, header, rows, textColumns) {
  const t = add(parent, 'table');
  const head = add(t, 'tr');
  header.forEach(h => add(head, 'th', {}, h));
  rows.forEach(row => {
    const tr = add(t, 'tr');
    row.forEach((cell, i) => add(tr, 'td', textColumns.includes(i) ? {class: 'text wrap'} : {},
                                 typeof cell === 'number' ? format(cell) : (cell ?? '')));
  });
  return t;
}

function best(trial, metric, smaller) {
  const values = trial.validation.map(r => r.metrics[metric]).filter(v => typeof v === 'number');
  if (values.length === 0) return null;
  return smaller ? Math.min(...values) : Math.max(...values);
}

function runLabel(run) { return run.folder.split('/').filter(Boolean).pop() || run.folder; }

function renderCharts(root, runs) {
  add(root, 'h2', {}, 'Curves');
  add(root, 'div', {class: 'note'},
      'Every trial of every run, overlaid: a series per trial, named by its run folder.');
  root.insertAdjacentHTML('beforeend', controls());
  const box = add(root, 'div', {class: 'charts'});
  const trials = runs.flatMap(run => run.trials.map(t => ({
    id: t.id, label: `${runLabel(run)}: trial ${t.id}`,
    reports: t.training.concat(t.validation)})));
  drawCharts(box, series(trials));
  bindControls();
}

function renderRun(root, run) {
  add(root, 'h2', {}, `${run.name}: ${run.state}, ${run.trials.length} trial(s), ` +
                      `${run.slots} slot(s) per trial`);
  add(root, 'div', {class: 'note'}, run.folder);
  table(root, ['trial', 'state', 'restarts', 'hyperparameters', 'batches',
               `best ${run.searcher_metric}`, 'records/s', 'MB exchanged'],
        run.trials.map(t => [t.id, t.state, t.restarts, JSON.stringify(t.hyperparameters),
                             t.training.length ? t.training[t.training.length - 1].batches : 0,
                             best(t, run.searcher_metric, run.smaller_is_better), trialRate(t),
                             t.training.reduce((s, r) => s + (r.exchanged_bytes || 0), 0) / 1e6]),
        [1, 3]);
  add(root, 'h3', {}, 'Where the training time went (seconds, summed over training reports)');
  const phases = [...new Set(run.trials.flatMap(t => t.training.flatMap(
      r => Object.keys(r.timings || {}))))];
  table(root, ['trial', ...phases, 'largest'], run.trials.map(t => {
    const sums = phases.map(p => t.training.reduce((s, r) => s + ((r.timings || {})[p] || 0), 0));
    const largest = phases[sums.indexOf(Math.max(...sums))];
    return [t.id, ...sums, largest];
  }), [phases.length + 1]);
  renderPaces(root, run);
}

// Straggler scores: each rank's own work per batch against the fastest rank's, over the
// training reports of a trial of several slots.
function renderPaces(root, run) {
  const rows = [];
  run.trials.forEach(t => {
    const reports = t.training.filter(r => (r.ranks || []).length > 1);
    if (reports.length === 0) return;
    const mean = values => values.reduce((s, v) => s + v, 0) / values.length;
    reports[0].ranks.forEach((_, i) => {
      const paces = reports.map(r => r.ranks[i]).filter(p => p);
      rows.push([t.id, paces[0].rank, mean(paces.map(p => p.step_seconds)),
                 mean(paces.map(p => p.compute_seconds)), mean(paces.map(p => p.vs_fastest)),
                 Math.min(...paces.map(p => p.vs_fastest)), paces[paces.length - 1].vs_best]);
    });
  });
  if (rows.length === 0) return;
  add(root, 'h3', {}, "Ranks' pace (straggler scores, over the training reports)");
  table(root, ['trial', 'rank', 'step s/batch', 'in plugin s/batch', 'vs fastest (mean)',
               'vs fastest (lowest)', 'vs own best (latest)'], rows, []);
  add(root, 'div', {class: 'note'},
      "A rank's own work per batch (data, compute, optimizer step; waiting for the other ranks " +
      'left out). vs fastest: the fastest rank\'s step time over this one\'s, 1 for the fastest; ' +
      'a straggler stays well below 1.');
}

function renderScaling(root, runs) {
  add(root, 'h2', {}, 'Scaling');
  const rateOf = run => median(run.trials.map(trialRate));
  const rows = runs.map(run => {
    const baseline =
        runs.find(b => b.slots === 1 && b.one_slot_fingerprint === run.one_slot_fingerprint);
    const rate = rateOf(run);
    const base = baseline ? rateOf(baseline) : null;
    const speedup = base && rate ? rate / base : null;
    return [run.name, run.folder, run.slots, rate, speedup,
            speedup === null ? 'no 1-slot baseline' : speedup / run.slots];
  });
  table(root, ['experiment', 'run folder', 'slots', 'records/s', 'speed-up',
               'scaling efficiency'], rows, [0, 1]);
  add(root, 'div', {class: 'note'},
      'Efficiency: records/s over the slots times the records/s of the 1-slot run given that ' +
      'trains the same (the training config but for its slots, as the orchestrator compares).');
}

const root = document.getElementById('report');
renderCharts(root, data.runs);
data.runs.forEach(run => renderRun(root, run));
renderScaling(root, data.runs);
document.body.setAttribute('data-rendered', String(document.querySelectorAll('.chart-box').length));
// How far the widest table runs past the page's width (0 when none does), in pixels.
document.body.setAttribute('data-overflow', String(Math.max(0, ...[...document.querySelectorAll(
    'table')].map(t => Math.ceil(t.getBoundingClientRect().right - root.getBoundingClientRect().right)))));
)js";

}  // namespace

std::string RenderReportPage(absl::string_view data_json, const ChartLibrary& charts) {
  // "</" would end the script element early; JSON reads "<\/" as the same two characters.
  const std::string embedded = absl::StrReplaceAll(data_json, {{"</", "<\\/"}});
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Cohort report</title>\n<style>",
      charts.css, kChartStyle, kStyle, "</style>\n</head>\n<body>\n<h1>Cohort report</h1>\n",
      "<div id=\"report\"></div>\n<script type=\"application/json\" id=\"report-data\">", embedded,
      "</script>\n<script>", charts.js, "</script>\n<script>\n'use strict';\n", kChartScript,
      kScript, "</script>\n</body>\n</html>\n");
}

}  // namespace cohort
