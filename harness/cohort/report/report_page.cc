#include "harness/cohort/report/report_page.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace cohort {
namespace {

constexpr char kStyle[] = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; font-family: monospace; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { border: 1px solid #ddd; background: #fff; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
.note { color: #666; }
)css";

constexpr char kScript[] = R"js(
'use strict';
const data = JSON.parse(document.getElementById('report-data').textContent);
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2',
                '#17becf', '#bcbd22', '#7f7f7f'];
const SVG = 'http://www.w3.org/2000/svg';

function add(parent, tag, attrs, text) {
  const node = ['svg', 'polyline', 'line', 'text', 'rect', 'g'].includes(tag)
      ? document.createElementNS(SVG, tag) : document.createElement(tag);
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

// A line chart of `series` ([{name, points: [[x, y], ...]}]); lines with fewer than 2 points of
// finite values are left out.
function lineChart(parent, title, xLabel, series) {
  const W = 460, H = 280, L = 62, R = 12, T = 26, B = 58;
  const svg = add(parent, 'svg', {class: 'chart', width: W, height: H,
                                  viewBox: `0 0 ${W} ${H}`, 'data-title': title});
  add(svg, 'text', {x: W / 2, y: 16, 'text-anchor': 'middle', 'font-weight': 'bold'}, title);
  const lines = series.map(s => ({name: s.name, points: s.points.filter(
      p => Number.isFinite(p[0]) && Number.isFinite(p[1]))})).filter(s => s.points.length >= 2);
  const all = lines.flatMap(s => s.points);
  if (all.length === 0) {
    add(svg, 'text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, 'no data');
    svg.setAttribute('data-lines', '0');
    return svg;
  }
  let [x0, x1] = [Math.min(...all.map(p => p[0])), Math.max(...all.map(p => p[0]))];
  let [y0, y1] = [Math.min(...all.map(p => p[1])), Math.max(...all.map(p => p[1]))];
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  if (y0 === y1) { y0 -= Math.abs(y0) * 0.1 || 1; y1 += Math.abs(y1) * 0.1 || 1; }
  const x = v => L + (v - x0) / (x1 - x0) * (W - L - R);
  const y = v => H - B - (v - y0) / (y1 - y0) * (H - T - B);
  add(svg, 'line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888'});
  add(svg, 'line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#888'});
  for (let i = 0; i <= 4; ++i) {
    const xv = x0 + (x1 - x0) * i / 4, yv = y0 + (y1 - y0) * i / 4;
    add(svg, 'text', {x: x(xv), y: H - B + 14, 'text-anchor': 'middle'}, format(xv));
    add(svg, 'text', {x: L - 4, y: y(yv) + 4, 'text-anchor': 'end'}, format(yv));
    add(svg, 'line', {x1: L, y1: y(yv), x2: W - R, y2: y(yv), stroke: '#eee'});
  }
  add(svg, 'text', {x: (L + W - R) / 2, y: H - B + 28, 'text-anchor': 'middle'}, xLabel);
  lines.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    add(svg, 'polyline', {fill: 'none', stroke: color, 'stroke-width': 1.5,
                          points: s.points.map(p => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`)
                                      .join(' ')});
    const lx = L + (i % 4) * 96, ly = H - 12 - Math.floor(i / 4) * 13;
    if (ly > H - B + 30) {
      add(svg, 'rect', {x: lx, y: ly - 8, width: 10, height: 3, fill: color});
      add(svg, 'text', {x: lx + 14, y: ly - 4}, s.name);
    }
  });
  svg.setAttribute('data-lines', String(lines.length));
  return svg;
}

function trialRate(trial) {
  const rates = trial.training.map(r => r.records_per_second).filter(v => v > 0);
  return median(rates.length >= 3 ? rates.slice(1) : rates);  // the first includes warm-up
}

function table(parent, header, rows, textColumns) {
  const t = add(parent, 'table');
  const head = add(t, 'tr');
  header.forEach(h => add(head, 'th', {}, h));
  rows.forEach(row => {
    const tr = add(t, 'tr');
    row.forEach((cell, i) => add(tr, 'td', textColumns.includes(i) ? {class: 'text'} : {},
                                 typeof cell === 'number' ? format(cell) : (cell ?? '')));
  });
  return t;
}

function best(trial, metric, smaller) {
  const values = trial.validation.map(r => r.metrics[metric]).filter(v => typeof v === 'number');
  if (values.length === 0) return null;
  return smaller ? Math.min(...values) : Math.max(...values);
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
  const charts = add(root, 'div', {class: 'charts'});
  const name = t => `trial ${t.id}`;
  const trainingMetric = run.trials.some(t => t.training.some(r => 'loss' in r.metrics))
      ? 'loss' : Object.keys((run.trials.find(t => t.training.length) || {training: [{metrics: {}}]})
                                 .training[0].metrics)[0];
  if (trainingMetric) {
    lineChart(charts, `training ${trainingMetric}`, 'batches', run.trials.map(t => ({
      name: name(t), points: t.training.map(r => [r.batches, r.metrics[trainingMetric]])})));
  }
  const validationMetrics = [...new Set(run.trials.flatMap(
      t => t.validation.flatMap(r => Object.keys(r.metrics))))];
  for (const metric of validationMetrics) {
    lineChart(charts, `validation ${metric}`, 'batches', run.trials.map(t => ({
      name: name(t), points: t.validation.map(r => [r.batches, r.metrics[metric]])})));
  }
  lineChart(charts, 'records/s', 'batches', run.trials.map(t => ({
    name: name(t), points: t.training.map(r => [r.batches, r.records_per_second])})));

  add(root, 'h3', {}, 'Where the training time went (seconds, summed over training reports)');
  const phases = [...new Set(run.trials.flatMap(t => t.training.flatMap(
      r => Object.keys(r.timings || {}))))];
  table(root, ['trial', ...phases, 'largest'], run.trials.map(t => {
    const sums = phases.map(p => t.training.reduce((s, r) => s + ((r.timings || {})[p] || 0), 0));
    const largest = phases[sums.indexOf(Math.max(...sums))];
    return [t.id, ...sums, largest];
  }), [phases.length + 1]);
}

function renderScaling(root, runs) {
  add(root, 'h2', {}, 'Scaling');
  const rateOf = run => median(run.trials.map(trialRate));
  const rows = runs.map(run => {
    const baseline = runs.find(b => b.slots === 1 && b.name === run.name) ||
                     runs.find(b => b.slots === 1);
    const rate = rateOf(run);
    const base = baseline ? rateOf(baseline) : null;
    const speedup = base && rate ? rate / base : null;
    return [run.name, run.folder, run.slots, rate, speedup,
            speedup === null ? 'no 1-slot baseline' : speedup / run.slots];
  });
  table(root, ['experiment', 'run folder', 'slots', 'records/s', 'speed-up',
               'scaling efficiency'], rows, [0, 1]);
  add(root, 'div', {class: 'note'},
      'Efficiency: records/s over the slots times the records/s of the 1-slot run of the same ' +
      'experiment name (else of the first 1-slot run given).');
}

const root = document.getElementById('report');
data.runs.forEach(run => renderRun(root, run));
renderScaling(root, data.runs);
document.body.setAttribute('data-rendered', String(document.querySelectorAll('svg.chart').length));
)js";

}  // namespace

std::string RenderReportPage(absl::string_view data_json) {
  // "</" would end the script element early; JSON reads "<\/" as the same two characters.
  const std::string embedded = absl::StrReplaceAll(data_json, {{"</", "<\\/"}});
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Cohort report</title>\n<style>",
      kStyle, "</style>\n</head>\n<body>\n<h1>Cohort report</h1>\n<div id=\"report\"></div>\n",
      "<script type=\"application/json\" id=\"report-data\">", embedded, "</script>\n<script>",
      kScript, "</script>\n</body>\n</html>\n");
}

}  // namespace cohort
