// gpusched dashboard: a single page that polls the REST API (docs/DASHBOARD.md).
// No framework and no build step: plain DOM, uPlot for the charts.
'use strict';

(function () {
  const API = '../'; // the page is /ui/: the API is beside it, behind any path prefix
  const TOKEN_KEY = 'gpusched.token';
  const POLL_MS = 1000;
  const ETA_MS = 2000;

  const app = {
    route: null,       // {view, id}
    jobs: [],          // GET /v1/jobs
    cluster: null,     // GET /v1/cluster
    etas: {},          // job id -> ETA (GET /v1/eta)
    etaAt: 0,
    rates: {},         // job id -> {steps, at, rate}: steps/s between polls
    job: null,         // the job page's job, series and logs
    charts: [],        // uPlot instances of the current view
    timer: null,
    busy: false,
    lastOK: null,
  };

  // ---- the REST API -------------------------------------------------------

  async function api(path, opts) {
    opts = opts || {};
    const headers = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const resp = await fetch(API + path, {
      method: opts.method || 'GET', headers: headers, cache: 'no-store',
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await resp.text();
    if (!resp.ok) {
      let msg = text;
      try { msg = JSON.parse(text).error || text; } catch (e) { /* not JSON */ }
      const err = new Error(resp.status + ' ' + msg.trim());
      err.status = resp.status;
      throw err;
    }
    if (opts.text) return text;
    return text ? JSON.parse(text) : null;
  }

  // ---- DOM helpers (text only: user data is never parsed as HTML) -------

  function h(tag, attrs) {
    const el = document.createElement(tag);
    for (const k in (attrs || {})) {
      const v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (let i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }

  function append(el, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(el, x); }); return; }
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }

  function table(headers, rows, empty) {
    if (!rows.length) return h('div', {class: 'empty', text: empty});
    return h('table', null,
      h('thead', null, h('tr', null, headers.map(function (x) {
        return h('th', {class: x.num ? 'num' : null, text: x.label || x});
      }))),
      h('tbody', null, rows));
  }

  function stateEl(st, extra) {
    return h('span', {class: 'state state-' + st, 'data-state': st}, st + (extra || ''));
  }

  // ---- formatting ---------------------------------------------------------

  function ago(t) { return t ? rel(new Date(t) - Date.now()) : '-'; }

  function rel(ms) {
    const s = Math.round(Math.abs(ms) / 1000);
    const text = dur(s);
    if (s < 1) return 'now';
    return ms > 0 ? 'in ' + text : text + ' ago';
  }

  function dur(s) {
    s = Math.round(s);
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + (s % 60 ? (s % 60) + 's' : '');
    if (s < 86400) return Math.floor(s / 3600) + 'h' + Math.floor((s % 3600) / 60) + 'm';
    return Math.floor(s / 86400) + 'd' + Math.floor((s % 86400) / 3600) + 'h';
  }

  function clock(t) { return t ? new Date(t).toLocaleTimeString() : '-'; }

  function gpusText(j) {
    return j.min_gpus !== j.max_gpus ? j.gpus_requested + ' (' + j.min_gpus + '-' + j.max_gpus + ')' : String(j.gpus_requested);
  }

  function active(j) { return j.state === 'queued' || j.state === 'paused' || j.state === 'running' || j.state === 'preempted'; }

  // ---- routing ------------------------------------------------------------

  function parseRoute() {
    const hash = location.hash.replace(/^#\/?/, '');
    const parts = hash.split('/');
    if (parts[0] === 'job' && parts[1]) return {view: 'job', id: decodeURIComponent(parts[1])};
    if (parts[0] === 'submit') return {view: 'submit'};
    if (parts[0] === 'accuracy') return {view: 'accuracy'};
    return {view: 'overview'};
  }

  function navigate() {
    app.route = parseRoute();
    app.job = null;
    destroyCharts();
    document.querySelectorAll('[data-nav]').forEach(function (a) {
      a.classList.toggle('active', a.getAttribute('data-nav') === app.route.view);
    });
    render();
    refresh(true);
  }

  // ---- polling ------------------------------------------------------------

  async function refresh(force) {
    if (app.busy) return;
    app.busy = true;
    clearTimeout(app.timer);
    try {
      await load(force);
      app.lastOK = new Date();
      setStatus('updated ' + app.lastOK.toLocaleTimeString(), false);
    } catch (e) {
      setStatus(e.status === 401 || e.status === 403 ? 'not authorized: enter a token' : 'cannot reach the server: ' + e.message, true);
    } finally {
      app.busy = false;
      render();
      app.timer = setTimeout(refresh, POLL_MS);
    }
  }

  async function load(force) {
    const r = app.route;
    const tasks = [api('v1/jobs').then(function (x) { noteRates(x.jobs); app.jobs = x.jobs; })];
    if (r.view === 'overview') tasks.push(api('v1/cluster').then(function (x) { app.cluster = x; }));
    if ((r.view === 'overview' || r.view === 'job') && (force || Date.now() - app.etaAt >= ETA_MS)) {
      tasks.push(api('v1/eta').then(function (x) {
        app.etas = {};
        x.etas.forEach(function (e) { app.etas[e.job] = e; });
        app.etaAt = Date.now();
      }));
    }
    if (r.view === 'job') tasks.push(loadJob(r.id));
    if (r.view === 'accuracy') tasks.push(api('v1/eta/accuracy').then(function (x) { app.accuracy = x; }));
    await Promise.all(tasks);
  }

  async function loadJob(id) {
    const known = app.jobs.some(function (j) { return j.id === id; }) || !app.jobs.length;
    if (!known) { app.job = {missing: true}; return; }
    const parts = await Promise.all([api('v1/jobs/' + encodeURIComponent(id)),
      api('v1/jobs/' + encodeURIComponent(id) + '/series'),
      api('v1/jobs/' + encodeURIComponent(id) + '/logs', {text: true})]);
    app.job = {job: parts[0], series: parts[1], logs: parts[2]};
  }

  // noteRates keeps each running job's steps/s between two polls that saw
  // new progress.
  function noteRates(jobs) {
    jobs.forEach(function (j) {
      if (j.state !== 'running' || !j.progress_at) return;
      const at = new Date(j.progress_at).getTime();
      const prev = app.rates[j.id];
      if (prev && at > prev.at && j.steps >= prev.steps) {
        app.rates[j.id] = {steps: j.steps, at: at, rate: (j.steps - prev.steps) / ((at - prev.at) / 1000)};
      } else if (!prev || at !== prev.at) {
        app.rates[j.id] = {steps: j.steps, at: at, rate: prev ? prev.rate : null};
      }
    });
  }

  function setStatus(text, err) {
    const el = document.getElementById('status');
    el.textContent = text;
    el.classList.toggle('err', !!err);
  }

  function banner(text, ok) {
    const el = document.getElementById('banner');
    el.textContent = text;
    el.className = 'banner' + (ok ? ' ok' : '');
    el.hidden = !text;
  }

  // ---- views --------------------------------------------------------------

  function render() {
    const main = document.getElementById('main');
    const r = app.route;
    if (r.view === 'job') { renderJob(main); return; }
    destroyCharts();
    if (r.view === 'submit') {
      if (!document.getElementById('submit-form')) main.replaceChildren(submitView()); // keep what is typed
      return;
    }
    main.replaceChildren();
    if (r.view === 'accuracy') main.append(accuracyView());
    else main.append(clusterView(), queueView(), recentView());
  }

  function clusterView() {
    const c = app.cluster;
    const sec = h('section', {id: 'cluster'}, h('h2', null, 'Cluster'));
    if (!c) return append(sec, h('div', {class: 'empty', text: 'loading…'})), sec;
    const chips = h('div', {class: 'chips'});
    ['queued', 'paused', 'running', 'preempted', 'succeeded', 'failed', 'cancelled'].forEach(function (st) {
      chips.append(h('span', {class: 'chip'}, stateEl(st), ' ', String(c.jobs[st] || 0)));
    });
    chips.append(h('span', {class: 'chip', text: 'power ' + (c.power_w ? c.power_w.toFixed(0) + ' W' : 'n/a')}));
    sec.append(chips, h('h3', null, 'GPUs by type'), table(
      ['type', {label: 'GPUs', num: 1}, {label: 'busy', num: 1}, {label: 'free', num: 1}, {label: 'down', num: 1}],
      c.types.map(function (t) {
        return h('tr', {'data-type': t.type}, h('td', {text: t.type}), h('td', {class: 'num', text: t.gpus}),
          h('td', {class: 'num', text: t.busy}), h('td', {class: 'num', text: t.free}), h('td', {class: 'num', text: t.down}));
      }), 'no GPUs: no node has registered'));
    sec.append(h('h3', null, 'Nodes'), c.nodes.length ? h('div', {class: 'nodes'}, c.nodes.map(nodeCard)) :
      h('div', {class: 'empty', text: 'no node has registered'}));
    return sec;
  }

  function nodeCard(n) {
    const owner = {};
    app.jobs.forEach(function (j) {
      if (j.state !== 'running') return;
      (j.alloc || []).forEach(function (g) { owner[g] = j.id; });
    });
    const down = n.state !== 'ready';
    const gpus = h('div', {class: 'gpus'}, n.gpus.map(function (g) {
      const job = owner[n.name + '/' + g.index];
      const cls = 'gpu' + (down ? ' down' : job ? ' busy' : '');
      return h('div', {class: cls, title: g.type + ' #' + g.index + (job ? ' — ' + job : down ? ' — down' : ' — free')}, job || '');
    }));
    const type = Array.from(new Set(n.gpus.map(function (g) { return g.type; }))).join(',');
    return h('div', {class: 'node' + (down ? ' down' : ''), 'data-node': n.name, 'data-state': n.state},
      h('div', {class: 'head'}, h('strong', {text: n.name}), stateEl(n.state)),
      h('div', {class: 'small muted'}, type + ' · ' + n.gpus_used + '/' + n.gpus.length + ' busy · ' +
        (n.power_w !== undefined ? n.power_w.toFixed(0) + ' W' : 'no power reading') + loadStateText(n.energy)),
      gpus,
      h('div', {class: 'load', title: 'load ' + Math.round(n.load * 100) + '%'}, h('div', {style: 'width:' + Math.round(n.load * 100) + '%'})),
      h('div', {class: 'small muted'}, 'heartbeat ' + ago(n.last_heartbeat)));
  }

  // loadStateText is seed 002's load state of a node and where its
  // thresholds come from (docs/ENERGY.md, "Live"), "" without them.
  function loadStateText(e) {
    if (!e || !e.load_state || !e.thresholds || !e.thresholds.length) return '';
    const t = e.thresholds[0];
    return ' · load state ' + e.load_state + ' (th ' + t.th1.toFixed(2) + '/' + t.th2.toFixed(2) + ', ' + t.source + ')';
  }

  function etaCell(e, which) {
    if (!e) return h('span', {class: 'muted', text: '…'});
    const p = e['predicted_' + which];
    if (!p) return h('span', {class: 'muted', title: e.reason || '', text: 'unknown'});
    const lo = e[which + '_p10'], hi = e[which + '_p90'];
    const range = lo && hi && lo !== hi ? ' (' + rel(new Date(lo) - Date.now()) + ' – ' + rel(new Date(hi) - Date.now()) + ')' : '';
    return h('span', {title: 'basis: ' + e.basis.detail + ' · P10–P90 over ' + e.basis.runs + ' runs'},
      rel(new Date(p) - Date.now()), h('span', {class: 'muted small', text: range}));
  }

  function progressCell(j) {
    if (j.state !== 'running' || !j.progress_at) return '';
    const r = app.rates[j.id];
    const rate = r && r.rate !== null ? ' · ' + r.rate.toFixed(2) + ' steps/s' : '';
    if (!j.total_steps) return h('span', {class: 'small', text: 'step ' + j.steps + rate});
    const pct = Math.min(100, Math.round(100 * j.steps / j.total_steps));
    return h('div', null, h('div', {class: 'bar', title: pct + '%'}, h('div', {style: 'width:' + pct + '%'})),
      h('span', {class: 'small', text: j.steps + '/' + j.total_steps + rate}));
  }

  function cancelButton(j) {
    return h('button', {class: 'cancel', 'data-cancel': j.id, onclick: function (ev) { cancelJob(j.id, ev.target); }}, 'Cancel');
  }

  async function cancelJob(id, btn) {
    btn.disabled = true;
    try {
      const j = await api('v1/jobs/' + encodeURIComponent(id) + '/cancel', {method: 'POST'});
      banner('job ' + id + ': ' + (j.state === 'cancelled' ? 'cancelled' : 'cancelling (' + j.state + ')'), true);
    } catch (e) {
      banner('cancel ' + id + ': ' + e.message, false);
    }
    refresh(true);
  }

  function jobLink(j) { return h('a', {href: '#/job/' + encodeURIComponent(j.id), text: j.id}); }

  function queueView() {
    const rows = app.jobs.filter(active).map(function (j) {
      const e = app.etas[j.id];
      return h('tr', {'data-job': j.id},
        h('td', null, jobLink(j)), h('td', {text: j.name}), h('td', {text: j.user || ''}),
        h('td', null, stateEl(j.state)), h('td', {class: 'num', text: gpusText(j)}),
        h('td', {class: 'small', text: j.state === 'running' ? (j.alloc || []).join(',') : (j.reason || '')}),
        h('td', null, j.state === 'running' ? h('span', {text: 'started ' + ago(j.started_at)}) : etaCell(e, 'start')),
        h('td', null, etaCell(e, 'finish')), h('td', null, progressCell(j)), h('td', null, cancelButton(j)));
    });
    return h('section', {id: 'queue'}, h('h2', null, 'Queue and running jobs'),
      table(['job', 'name', 'user', 'state', {label: 'GPUs', num: 1}, 'wait reason / GPUs', 'start', 'finish', 'progress', ''],
        rows, 'no active job'));
  }

  function recentView() {
    const ended = app.jobs.filter(function (j) { return !active(j); }).slice(-20).reverse();
    const rows = ended.map(function (j) {
      const ran = j.started_at && j.finished_at ? dur((new Date(j.finished_at) - new Date(j.started_at)) / 1000) : '-';
      return h('tr', {'data-job': j.id},
        h('td', null, jobLink(j)), h('td', {text: j.name}), h('td', {text: j.user || ''}),
        h('td', null, stateEl(j.state, j.state === 'failed' && j.exit_code !== null ? '(' + j.exit_code + ')' : '')),
        h('td', {class: 'num', text: gpusText(j)}), h('td', {text: ran}), h('td', {text: ago(j.finished_at)}),
        h('td', {class: 'small', text: j.reason || ''}));
    });
    return h('section', {id: 'recent'}, h('h2', null, 'Recently ended'),
      table(['job', 'name', 'user', 'state', {label: 'GPUs', num: 1}, 'ran', 'ended', 'reason'], rows, 'no job has ended yet'));
  }

  // ---- submit ---------------------------------------------------------------

  function field(label, input) { return [h('label', {for: input.id, text: label}), input]; }

  function submitView() {
    const form = h('form', {class: 'submit', id: 'submit-form', onsubmit: onSubmit},
      field('Command (shell)', h('input', {id: 'f-command', name: 'command', required: true, placeholder: 'python train.py --epochs 10'})),
      field('GPUs', h('input', {id: 'f-gpus', name: 'gpus', type: 'number', min: 1, value: 1, required: true})),
      field('Name', h('input', {id: 'f-name', name: 'name', placeholder: '(the program)'})),
      field('User', h('input', {id: 'f-user', name: 'user'})),
      field('Model (job type)', h('input', {id: 'f-model', name: 'model', placeholder: 'ResNet-50 (batch size 64)'})),
      field('Total steps', h('input', {id: 'f-steps', name: 'total_steps', type: 'number', min: 0})),
      field('Time limit (s)', h('input', {id: 'f-limit', name: 'time_limit_s', type: 'number', min: 0})),
      field('Priority', h('input', {id: 'f-priority', name: 'priority', type: 'number', value: 0})),
      h('div', {class: 'full'}, h('button', {type: 'submit', id: 'f-submit'}, 'Submit'),
        h('span', {class: 'muted small', text: ' the command runs as sh -c on its nodes'})));
    return h('section', {id: 'submit'}, h('h2', null, 'Submit a job'), form);
  }

  async function onSubmit(ev) {
    ev.preventDefault();
    const val = function (id) { return document.getElementById(id).value.trim(); };
    const spec = {command: ['sh', '-c', val('f-command')], gpus: parseInt(val('f-gpus'), 10)};
    if (val('f-name')) spec.name = val('f-name');
    if (val('f-user')) spec.user = val('f-user');
    if (val('f-model')) spec.model = val('f-model');
    if (val('f-steps')) spec.total_steps = parseInt(val('f-steps'), 10);
    if (val('f-limit')) spec.time_limit_s = parseInt(val('f-limit'), 10);
    if (val('f-priority')) spec.priority = parseInt(val('f-priority'), 10);
    try {
      const j = await api('v1/jobs', {method: 'POST', body: spec});
      banner('submitted ' + j.id, true);
      location.hash = '#/';
    } catch (e) {
      banner('submit: ' + e.message, false);
    }
  }

  // ---- forecast accuracy ------------------------------------------------------

  function accuracyView() {
    const a = app.accuracy;
    const sec = h('section', {id: 'accuracy'}, h('h2', null, 'How good the start forecasts have been'));
    if (!a) return append(sec, h('div', {class: 'empty', text: 'loading…'})), sec;
    const row = function (label, s) {
      return h('tr', null, h('td', {text: label}), h('td', {class: 'num', text: s.jobs}), h('td', {class: 'num', text: s.predictions}),
        h('td', {class: 'num', text: s.mean_abs_error_s.toFixed(1)}), h('td', {class: 'num', text: s.median_abs_error_s.toFixed(1)}),
        h('td', {class: 'num', text: s.p90_abs_error_s.toFixed(1)}), h('td', {class: 'num', text: s.bias_s.toFixed(1)}),
        h('td', {class: 'num', text: (100 * s.in_range).toFixed(0) + '%'}), h('td', {class: 'num', text: (100 * s.within_10pct).toFixed(0) + '%'}));
    };
    const rows = [row('all', a)].concat(a.by_lead.map(function (b) {
      return row('lead ' + dur(b.min_lead_s) + (b.max_lead_s ? '–' + dur(b.max_lead_s) : '+'), b);
    }));
    sec.append(table(['predictions', {label: 'jobs', num: 1}, {label: 'served', num: 1}, {label: 'mean |err| s', num: 1},
      {label: 'median |err| s', num: 1}, {label: 'P90 |err| s', num: 1}, {label: 'bias s', num: 1},
      {label: 'in P10–P90', num: 1}, {label: 'within 10%/5s', num: 1}], rows, ''));
    sec.append(h('h3', null, 'Length uncertainty by class'), table(['length class', {label: 'bias', num: 1}, {label: 'sigma', num: 1}, {label: 'finished jobs', num: 1}],
      a.spreads.map(function (s) {
        return h('tr', null, h('td', {text: s.class}), h('td', {class: 'num', text: s.bias.toFixed(3)}),
          h('td', {class: 'num', text: s.sigma.toFixed(3)}), h('td', {class: 'num', text: s.samples}));
      }), ''));
    return sec;
  }

  // ---- job page -----------------------------------------------------------------

  function renderJob(main) {
    const d = app.job;
    if (!d) { if (!main.firstChild) main.append(h('section', null, h('div', {class: 'empty', text: 'loading…'}))); return; }
    if (d.missing) { destroyCharts(); main.replaceChildren(h('section', null, h('h2', null, 'No job ' + app.route.id))); return; }
    const j = d.job;
    let page = document.getElementById('job-page');
    if (!page || page.getAttribute('data-job') !== j.id) {
      destroyCharts();
      page = h('div', {id: 'job-page', 'data-job': j.id},
        h('section', {id: 'job-head'}), h('section', {id: 'job-charts'}, h('h2', null, 'Throughput and power'),
          h('div', {class: 'charts'}, h('div', {id: 'chart-progress'}), h('div', {id: 'chart-power'}))),
        h('section', {id: 'job-replicas'}), h('section', {id: 'job-events'}), h('section', {id: 'job-logs'}));
      main.replaceChildren(page);
    }
    document.getElementById('job-head').replaceChildren(jobHead(j));
    drawCharts(d.series);
    document.getElementById('job-replicas').replaceChildren(h('h2', null, 'Replicas (attempt ' + j.attempt + ')'),
      table(['replica', 'node', 'GPUs', 'state'], d.series.replicas.map(function (r) {
        return h('tr', {'data-replica': r.id}, h('td', {text: r.id}), h('td', {text: r.node}), h('td', {text: r.gpus.join(',')}),
          h('td', {text: r.state + (r.exit_code !== undefined ? ' (' + r.exit_code + ')' : '')}));
      }), 'no replica: the job is not running'));
    const resizes = (j.events || []).filter(function (e) { return e.event === 'resized'; });
    document.getElementById('job-events').replaceChildren(
      h('h2', null, 'Resizes'), table(['time', 'change'], resizes.map(eventRow), 'no resize'),
      h('h3', null, 'Events'), table(['time', 'event', 'message'], (j.events || []).map(function (e) {
        return h('tr', {'data-event': e.event}, h('td', {text: clock(e.time)}), h('td', {text: e.event}), h('td', {text: e.message || ''}));
      }), 'no events'));
    const lines = d.logs.split('\n');
    const tail = lines.slice(Math.max(0, lines.length - 200)).join('\n');
    const pre = h('pre', {class: 'logs', id: 'logs'}, tail || '(no output yet)');
    document.getElementById('job-logs').replaceChildren(h('h2', null, 'Logs (last 200 lines)'), pre);
    pre.scrollTop = pre.scrollHeight;
  }

  function eventRow(e) { return h('tr', null, h('td', {text: clock(e.time)}), h('td', {text: e.message || ''})); }

  function jobHead(j) {
    const e = app.etas[j.id];
    const kv = h('div', {class: 'kv'});
    const add = function (k, v) { kv.append(h('div', {class: 'muted', text: k}), h('div', null, v)); };
    add('state', stateEl(j.state, j.exit_code !== null && j.state === 'failed' ? '(' + j.exit_code + ')' : ''));
    if (j.reason) add('reason', j.reason);
    add('name', j.name);
    if (j.user) add('user', j.user);
    add('GPUs', gpusText(j) + (j.gpu_type ? ', type ' + j.gpu_type : '') + (j.alloc.length ? ' on ' + j.alloc.join(',') : ''));
    if (j.model) add('model', j.model);
    add('command', j.command.join(' '));
    if (j.time_limit_s) add('time limit', dur(j.time_limit_s));
    if (j.total_steps || j.progress_at) add('progress', progressCell(j) || ('step ' + (j.steps || 0) + (j.total_steps ? '/' + j.total_steps : '')));
    if (j.energy_kwh) add('energy', j.energy_kwh.toPrecision(3) + ' kWh');
    add('submitted', clock(j.submitted_at) + ' (' + ago(j.submitted_at) + ')');
    if (j.started_at) add('started', clock(j.started_at) + ' (' + ago(j.started_at) + ')');
    if (j.finished_at) add('finished', clock(j.finished_at) + ' (' + ago(j.finished_at) + ')');
    if (active(j)) {
      if (j.state !== 'running') add('forecast start', etaCell(e, 'start'));
      add('forecast finish', etaCell(e, 'finish'));
      if (e) add('forecast basis', e.basis.detail + ' (' + e.basis.length + (e.basis.speed ? ', ' + e.basis.speed : '') + ')');
    }
    const actions = active(j) ? cancelButton(j) : null;
    return [h('h2', null, 'Job ' + j.id + ' ', actions), kv];
  }

  // ---- charts (uPlot) ------------------------------------------------------------

  function destroyCharts() {
    app.charts.forEach(function (c) { c.destroy(); });
    app.charts = [];
  }

  function drawCharts(series) {
    const prog = series.progress.map(function (p) { return [new Date(p.at).getTime() / 1000, p.steps, p.steps_per_s]; });
    const pow = series.power.map(function (p) { return [new Date(p.at).getTime() / 1000, p.watts]; });
    const specs = [
      {id: 'chart-progress', title: 'Progress', rows: prog, series: [
        {label: 'steps', stroke: '#2f6fdd', scale: 'steps'}, {label: 'steps/s', stroke: '#2e7d32', scale: 'rate'}],
        axes: [{scale: 'steps', label: 'steps'}, {scale: 'rate', side: 1, label: 'steps/s', grid: {show: false}}]},
      {id: 'chart-power', title: 'Power', rows: pow, series: [{label: 'watts', stroke: '#b26a00', scale: 'W'}],
        axes: [{scale: 'W', label: 'W'}]},
    ];
    specs.forEach(function (s) {
      const el = document.getElementById(s.id);
      const data = [s.rows.map(function (r) { return r[0]; })].concat(s.series.map(function (_, k) {
        return s.rows.map(function (r) { return r[k + 1]; });
      }));
      const chart = app.charts.find(function (c) { return c.root.parentNode === el; });
      if (chart) { chart.setData(data); return; }
      if (!s.rows.length) { el.replaceChildren(h('div', {class: 'empty', text: s.title + ': no data yet'})); return; }
      el.replaceChildren();
      const opts = {title: s.title, width: Math.max(el.clientWidth || 420, 320), height: 220,
        series: [{}].concat(s.series), axes: [{}].concat(s.axes), scales: {x: {time: true}}};
      app.charts.push(new uPlot(opts, data, el));
    });
  }

  // ---- token ---------------------------------------------------------------------

  function setupToken() {
    const input = document.getElementById('token');
    input.value = sessionStorage.getItem(TOKEN_KEY) || '';
    document.getElementById('token-form').addEventListener('submit', function (ev) {
      ev.preventDefault();
      const v = input.value.trim();
      if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
      banner(v ? 'token saved for this browser tab' : 'token cleared', true);
      refresh(true);
    });
    document.getElementById('token-clear').addEventListener('click', function () {
      input.value = '';
      sessionStorage.removeItem(TOKEN_KEY);
      banner('token cleared', true);
      refresh(true);
    });
  }

  window.addEventListener('hashchange', navigate);
  setupToken();
  navigate();
})();
