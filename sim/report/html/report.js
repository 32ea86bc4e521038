// gpusched sim report: draws the inlined data (see sim/report/html.go).
'use strict';
(function () {
  const d = JSON.parse(document.getElementById('report-data').textContent);
  const colors = ['#2f6fdd', '#d9480f', '#2e7d32', '#7b2cbf', '#b26a00', '#00838f', '#c2185b', '#5d4037'];
  const color = function (i) { return colors[i % colors.length]; };
  const lowerIsBetter = {avg_jct_s: 1, p50_jct_s: 1, p99_jct_s: 1, avg_queue_s: 1, makespan_s: 1, energy_kwh: 1,
    preemptions: 1, migrations: 1, resizes: 1, rejected: 1, unfinished: 1};
  const higherIsBetter = {completed: 1, gpu_util: 1};

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function summary() {
    const t = el('table');
    const head = el('tr');
    head.append(el('th', null, ''));
    d.runs.forEach(function (r) { head.append(el('th', null, r.name)); });
    t.append(head);
    d.rows.forEach(function (row) {
      const tr = el('tr', {'data-key': row.key});
      tr.append(el('td', null, row.label));
      let best = null;
      if (d.runs.length > 1 && (lowerIsBetter[row.key] || higherIsBetter[row.key])) {
        const vals = row.raw.filter(function (v) { return v !== null; });
        if (vals.length > 1) best = lowerIsBetter[row.key] ? Math.min.apply(null, vals) : Math.max.apply(null, vals);
      }
      row.values.forEach(function (v, i) {
        const td = el('td', null, v);
        if (best !== null && row.raw[i] === best) td.className = 'best';
        tr.append(td);
      });
      t.append(tr);
    });
    document.getElementById('summary-table').append(t);
  }

  function bars() {
    const box = document.getElementById('compare-bars');
    if (d.runs.length < 2) { box.append(el('p', {'class': 'empty'}, 'one run: nothing to compare (run sim with --policy a,b,c)')); return; }
    box.className = 'bars';
    ['avg_jct_s', 'p99_jct_s', 'avg_queue_s', 'makespan_s', 'gpu_util', 'energy_kwh'].forEach(function (key) {
      const row = d.rows.find(function (r) { return r.key === key; });
      if (!row) return;
      const max = Math.max.apply(null, row.raw.filter(function (v) { return v !== null; }).concat([0]));
      const card = el('div');
      card.append(el('h3', null, row.label));
      row.values.forEach(function (v, i) {
        const line = el('div', {'class': 'bar-row'});
        line.append(el('span', null, d.runs[i].name));
        const bar = el('div', {'class': 'bar'});
        bar.style.width = (max > 0 && row.raw[i] !== null ? 100 * row.raw[i] / max : 0) + '%';
        bar.style.background = color(i);
        line.append(bar, el('span', null, v));
        card.append(line);
      });
      box.append(card);
    });
  }

  function chart(id, title, xs, ys, opts) {
    const host = document.getElementById(id);
    if (!xs || !xs.length) { host.append(el('p', {'class': 'empty'}, title + ': no data')); return; }
    const series = [{label: opts.xlabel}].concat(d.runs.map(function (r, i) {
      return {label: r.name, stroke: color(i), width: 1.5, paths: opts.step ? uPlot.paths.stepped({align: 1}) : undefined, spanGaps: false};
    }));
    const u = new uPlot({
      title: title, width: Math.max(host.clientWidth || 480, 360), height: 260, series: series,
      scales: {x: {time: false, distr: opts.log ? 3 : 1}, y: opts.yrange ? {range: opts.yrange} : {}},
      axes: [{label: opts.xlabel}, {label: opts.ylabel}],
    }, [xs].concat(ys), host);
    host.setAttribute('data-drawn', '1');
    return u;
  }

  function charts() {
    chart('chart-cdf', 'JCT CDF (completed jobs)', d.cdf_x, d.cdf,
      {xlabel: 'JCT (s' + (d.log_x ? ', log scale' : '') + ')', ylabel: 'fraction of jobs', log: d.log_x, yrange: [0, 1], step: true});
    chart('chart-util', 'GPU utilisation', d.time, d.util, {xlabel: 'time (' + d.unit + ')', ylabel: '% of GPUs busy', yrange: [0, 100]});
    chart('chart-queue', 'Queue length', d.time, d.queue, {xlabel: 'time (' + d.unit + ')', ylabel: 'waiting jobs'});
    if (d.runs.some(function (r) { return r.energy; })) {
      chart('chart-power', 'Cluster power draw', d.time, d.power, {xlabel: 'time (' + d.unit + ')', ylabel: 'kW'});
    } else {
      document.getElementById('chart-power').append(el('p', {'class': 'empty'}, 'no power figures for this cluster: no energy accounted'));
    }
  }

  // timeline draws one job's history as an SVG bar: waiting in grey,
  // running in the run's colour (labelled with its GPUs), events as ticks.
  function timeline(job, run, runIndex, t0, t1) {
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 1000 34');
    svg.setAttribute('preserveAspectRatio', 'none');
    const x = function (t) { return 1000 * (t - t0) / Math.max(t1 - t0, 1e-9); };
    const rect = function (a, b, fill, label) {
      const r = document.createElementNS(ns, 'rect');
      r.setAttribute('x', x(a)); r.setAttribute('y', 8); r.setAttribute('height', 18);
      r.setAttribute('width', Math.max(x(b) - x(a), 0.5)); r.setAttribute('fill', fill);
      const tt = document.createElementNS(ns, 'title');
      tt.textContent = label;
      r.append(tt);
      svg.append(r);
    };
    let state = null, since = null, gpus = 0;
    const close = function (t) {
      if (state === 'wait') rect(since, t, '#c9ced6', 'waiting ' + (t - since).toFixed(1) + ' s');
      if (state === 'run') rect(since, t, color(runIndex), 'running on ' + gpus + ' GPUs for ' + (t - since).toFixed(1) + ' s');
    };
    job.events.forEach(function (e) {
      if (e.kind === 'submit' || e.kind === 'preempt') { close(e.t); state = 'wait'; since = e.t; }
      if (e.kind === 'start' || e.kind === 'resize') { close(e.t); state = 'run'; since = e.t; gpus = e.gpus; }
      if (e.kind === 'finish' || e.kind === 'reject' || e.kind === 'unfinished') { close(e.t); state = null; }
    });
    if (state) close(t1);
    const box = el('div', {'class': 'timeline', 'data-job': job.job});
    const first = job.events[0], last = job.events[job.events.length - 1];
    box.append(el('div', {'class': 'muted'}, run.name + ' · job ' + job.job + ' · ' + job.events.length + ' events, ' +
      (last.t - first.t).toFixed(1) + ' s from ' + first.kind + ' to ' + last.kind));
    box.append(svg);
    return box;
  }

  function timelines() {
    const list = document.getElementById('timeline-list');
    let any = false;
    d.runs.forEach(function (run, i) {
      run.timelines.forEach(function (job) {
        if (!job.events.length) return;
        const t0 = job.events[0].t, t1 = job.events[job.events.length - 1].t;
        list.append(timeline(job, run, i, t0, t1));
        any = true;
      });
    });
    if (!any) list.append(el('p', {'class': 'empty'}, 'no timeline in this report'));
  }

  summary();
  bars();
  charts();
  timelines();
  document.body.setAttribute('data-ready', '1');
})();
