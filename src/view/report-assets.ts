// Inline CSS and script of the HTML report. The script reads the JSON in #dm-data, drives the
// searchable, virtualised pairs table and renders a pair's side-by-side diff on demand (the diff
// itself, line blocks and highlighted ranges, is computed at build time by view/diff.ts).
// Plain ES2017 in a string: no template literals inside, no network, text only via textContent.

export const REPORT_CSS = `
:root {
  --bg: #ffffff; --fg: #1d2433; --muted: #667085; --line: #e4e7ec; --card: #f6f7f9; --hover: #eef4ff;
  --chosen: #1f9d55; --rejected: #d64545; --hl-a: #b7ebc6; --hl-b: #ffc9c9;
  --traj: #3b82f6; --inst: #8b5cf6; --pair: #0ea5e9; --drop: #ef4444; --emit: #16a34a;
  --repo: #6366f1; --turn: #0891b2; --sim: #f59e0b; --current: #fff4d6;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f1420; --fg: #e6e9ef; --muted: #98a2b3; --line: #2a3242; --card: #161d2b; --hover: #1c2740;
    --hl-a: #1d5b34; --hl-b: #7a2626; --current: #3a3320; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
body.modal-open { overflow: hidden; }
header.top, main, footer { max-width: 1240px; margin: 0 auto; padding: 0 20px; }
h1 { font-size: 22px; margin: 22px 0 4px; word-break: break-all; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.sub { color: var(--muted); margin: 0 0 14px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 8px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 140px; }
.card-value { font-size: 22px; font-weight: 650; }
.card-label { color: var(--muted); font-size: 12px; }
section { margin: 26px 0; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: 12.5px; margin-bottom: 4px; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
@media (max-width: 900px) { .grid2 { grid-template-columns: 1fr; } }
.chart { height: auto; max-width: 100%; display: block; }
.chart.hist { width: 100%; }
.chart text { fill: var(--fg); font-size: 12px; }
.chart .tick, .chart .axis-title, .chart .value.small { fill: var(--muted); font-size: 11px; }
.chart .track { fill: var(--card); }
.chart .axis { stroke: var(--muted); stroke-width: 1; }
.chart .grid { stroke: var(--line); stroke-dasharray: 3 3; }
.chart .marker { stroke: var(--rejected); stroke-width: 1.5; stroke-dasharray: 4 3; }
.chart .marker-label { fill: var(--rejected); font-size: 11px; }
.chart .row:hover .bar { opacity: .8; }
.bar-main, .bar-traj { fill: var(--traj); } .bar-inst { fill: var(--inst); } .bar-pair { fill: var(--pair); }
.bar-drop { fill: var(--drop); } .bar-emit { fill: var(--emit); } .bar-repo { fill: var(--repo); }
.bar-turn { fill: var(--turn); } .bar-sim { fill: var(--sim); } .bar-chosen { fill: var(--chosen); } .bar-rejected { fill: var(--rejected); }
.funnel-wrap { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
.funnel-wrap .chart { flex: 0 1 auto; }
.side-counters { border-collapse: collapse; font-size: 13px; }
.side-counters caption { text-align: left; color: var(--muted); font-size: 12px; padding-bottom: 4px; }
.side-counters td { padding: 2px 10px 2px 0; border-bottom: 1px solid var(--line); }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: var(--muted); font-size: 12.5px; }
.ok { color: var(--emit); font-size: 12.5px; }
.warn { color: var(--rejected); font-weight: 600; }
.controls { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
.controls input[type=search] { flex: 1 1 320px; padding: 7px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); font-size: 14px; }
.controls select { padding: 5px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.count { color: var(--muted); font-size: 13px; }
.table { border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.thead, .tr { display: grid; grid-template-columns: 64px minmax(160px, 2.3fr) minmax(110px, 1.4fr) 54px 54px 84px minmax(100px, 1fr) minmax(100px, 1fr); }
.thead { background: var(--card); border-bottom: 1px solid var(--line); font-weight: 600; font-size: 12.5px; }
.th { padding: 6px 8px; cursor: pointer; user-select: none; white-space: nowrap; }
.th.asc::after { content: " ▲"; font-size: 10px; } .th.desc::after { content: " ▼"; font-size: 10px; }
.viewport { position: relative; height: 60vh; overflow: auto; outline: none; }
.spacer { width: 1px; }
.rows { position: absolute; top: 0; left: 0; right: 0; will-change: transform; }
.tr { height: 28px; line-height: 28px; border-bottom: 1px solid var(--line); cursor: pointer; font-size: 13px; }
.tr:hover, .tr:focus { background: var(--hover); outline: none; }
.tr.current { background: var(--current); }
.td { padding: 0 8px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.td.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.hint { color: var(--muted); font-size: 12.5px; }
footer { color: var(--muted); font-size: 12px; padding-bottom: 30px; }
.overlay { position: fixed; inset: 0; background: rgba(10, 14, 24, .5); display: flex; justify-content: center; align-items: flex-start; padding: 2vh 2vw; z-index: 10; }
.overlay[hidden] { display: none; }
.panel { background: var(--bg); width: min(1500px, 96vw); max-height: 96vh; display: flex; flex-direction: column; border-radius: 10px; box-shadow: 0 10px 40px rgba(0,0,0,.35); overflow: hidden; }
.panel-head { display: flex; justify-content: space-between; gap: 10px; padding: 12px 16px; border-bottom: 1px solid var(--line); background: var(--card); }
.panel-head h2 { margin: 0; font-size: 16px; word-break: break-all; }
.d-meta, .d-ids { margin: 2px 0 0; font-size: 12.5px; color: var(--muted); }
.d-ids .who-a { color: var(--chosen); font-weight: 600; } .d-ids .who-b { color: var(--rejected); font-weight: 600; }
.d-ids code { margin-right: 14px; }
.d-buttons { display: flex; gap: 6px; align-items: flex-start; }
.d-buttons button { font-size: 15px; padding: 3px 10px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); border-radius: 6px; cursor: pointer; }
.panel-body { overflow: auto; padding: 0 16px 16px; }
.prompt .msg { border-left: 3px solid var(--line); padding: 2px 0 2px 10px; margin: 6px 0; }
.prompt .msg.role-assistant { border-color: #06b6d4; } .prompt .msg.role-tool { border-color: #eab308; }
.prompt .msg.role-user { border-color: #d946ef; } .prompt .msg.role-system { border-color: var(--muted); }
.msg-head { font-size: 12.5px; font-weight: 600; }
.msg-head .idx { color: var(--muted); font-weight: 400; margin-right: 6px; }
pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.msg-body { margin: 2px 0; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.call { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; color: #0e7490; white-space: pre-wrap; overflow-wrap: anywhere; }
button.more { border: none; background: none; color: var(--muted); cursor: pointer; padding: 0; font-size: 12px; }
button.more:hover { text-decoration: underline; }
table.sbs { width: 100%; table-layout: fixed; border-collapse: collapse; font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
table.sbs th { text-align: left; padding: 4px 8px; font-family: system-ui, sans-serif; font-size: 13px; border-bottom: 1px solid var(--line); }
table.sbs th.a, .stack-head.a { color: var(--chosen); } table.sbs th.b, .stack-head.b { color: var(--rejected); }
table.sbs td { vertical-align: top; white-space: pre-wrap; overflow-wrap: anywhere; padding: 0 8px; }
table.sbs td.b { border-left: 1px solid var(--line); }
table.sbs td.absent { background: repeating-linear-gradient(135deg, transparent 0 6px, var(--card) 6px 12px); }
tr.fold td, div.fold { color: var(--muted); background: var(--card); cursor: pointer; font-style: italic; }
tr.fold:hover td, div.fold:hover { text-decoration: underline; }
mark.hl-a { background: var(--hl-a); color: inherit; border-radius: 2px; }
mark.hl-b { background: var(--hl-b); color: inherit; border-radius: 2px; }
.stack { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
.stack-head { font: 600 13px system-ui, sans-serif; margin: 8px 0 2px; }
.cut-note { color: var(--muted); font-style: italic; font-size: 12px; margin-top: 6px; }
`;

export const REPORT_JS = `
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('dm-data').textContent);
  var C = D.cols;
  var N = D.n;
  var ROW_H = 28;
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function fmtSim(x) { return Number(x).toFixed(3); }
  function repoOf(i) { return D.repos[C.repo[i]]; }
  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

  // ------------------------------------------------------------------ table
  var vp = $('viewport'), rowsEl = $('rows'), spacer = $('spacer');
  var view = [];
  var hay = null;
  var sortKey = 'row', sortDir = 1;
  var current = -1;
  var lastStart = -1, lastEnd = -1;

  function buildHay() {
    hay = new Array(N);
    for (var i = 0; i < N; i++) {
      hay[i] = (C.inst[i] + ' ' + repoOf(i) + ' ' + C.cid[i] + ' ' + C.rid[i] + ' ' + D.labels[C.ct[i]] + ' ' + D.labels[C.rt[i]] + ' #' + C.row[i]).toLowerCase();
    }
  }

  function fillSelect(id) {
    var s = $(id);
    var order = D.labels.map(function (l, k) { return k; }).sort(function (x, y) { return D.labels[x] < D.labels[y] ? -1 : 1; });
    order.forEach(function (k) { var o = el('option', null, D.labels[k]); o.value = String(k); s.appendChild(o); });
  }

  function sortValue(key) {
    if (key === 'repo') return function (i) { return repoOf(i); };
    if (key === 'ct' || key === 'rt') return function (i) { return D.labels[C[key][i]]; };
    return function (i) { return C[key][i]; };
  }

  function applyFilter() {
    if (!hay) buildHay();
    var words = $('q').value.trim().toLowerCase().split(/\\s+/).filter(Boolean);
    var fct = $('f-ct').value, frt = $('f-rt').value;
    var ct = fct === '' ? -1 : Number(fct), rt = frt === '' ? -1 : Number(frt);
    var out = [];
    outer: for (var i = 0; i < N; i++) {
      if (ct >= 0 && C.ct[i] !== ct) continue;
      if (rt >= 0 && C.rt[i] !== rt) continue;
      for (var w = 0; w < words.length; w++) if (hay[i].indexOf(words[w]) < 0) continue outer;
      out.push(i);
    }
    var get = sortValue(sortKey);
    if (sortKey !== 'row' || sortDir !== 1) {
      out.sort(function (x, y) {
        var a = get(x), b = get(y);
        var c = a < b ? -1 : a > b ? 1 : 0;
        return c !== 0 ? c * sortDir : x - y;
      });
    }
    view = out;
    $('count').textContent = (view.length === N ? plural(N, 'pair') : view.length + ' of ' + plural(N, 'pair'));
    spacer.style.height = (view.length * ROW_H) + 'px';
    vp.style.height = Math.max(ROW_H * 4, Math.min(Math.round(window.innerHeight * 0.6), N * ROW_H + 2)) + 'px';
    vp.scrollTop = 0;
    renderRows(true);
  }

  function cell(text, cls) { var c = el('div', 'td' + (cls ? ' ' + cls : ''), text); c.title = text; c.setAttribute('role', 'cell'); return c; }

  function rowEl(i) {
    var r = el('div', 'tr');
    r.setAttribute('role', 'row');
    r.tabIndex = 0;
    r.dataset.i = String(i);
    if (i === current) r.className += ' current';
    r.appendChild(cell(String(C.row[i]), 'num'));
    r.appendChild(cell(C.inst[i], 'mono'));
    r.appendChild(cell(repoOf(i)));
    r.appendChild(cell(String(C.turn[i]), 'num'));
    r.appendChild(cell(String(C.msg[i]), 'num'));
    r.appendChild(cell(fmtSim(C.sim[i]), 'num'));
    r.appendChild(cell(D.labels[C.ct[i]], 'mono'));
    r.appendChild(cell(D.labels[C.rt[i]], 'mono'));
    return r;
  }

  function renderRows(force) {
    var top = vp.scrollTop, h = vp.clientHeight || 480;
    var start = Math.max(0, Math.floor(top / ROW_H) - 8);
    var end = Math.min(view.length, Math.ceil((top + h) / ROW_H) + 8);
    if (!force && start === lastStart && end === lastEnd) return;
    lastStart = start; lastEnd = end;
    rowsEl.style.transform = 'translateY(' + (start * ROW_H) + 'px)';
    var frag = document.createDocumentFragment();
    for (var k = start; k < end; k++) frag.appendChild(rowEl(view[k]));
    rowsEl.replaceChildren(frag);
  }

  var scrollQueued = false;
  vp.addEventListener('scroll', function () {
    if (scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(function () { scrollQueued = false; renderRows(false); });
  });
  rowsEl.addEventListener('click', function (e) {
    var r = e.target.closest('.tr');
    if (r) open(Number(r.dataset.i));
  });
  rowsEl.addEventListener('keydown', function (e) {
    var r = e.target.closest('.tr');
    if (!r) return;
    if (e.key === 'Enter') { e.preventDefault(); open(Number(r.dataset.i)); }
  });
  var qTimer = 0;
  $('q').addEventListener('input', function () { clearTimeout(qTimer); qTimer = setTimeout(applyFilter, 90); });
  $('f-ct').addEventListener('change', applyFilter);
  $('f-rt').addEventListener('change', applyFilter);
  Array.prototype.forEach.call(document.querySelectorAll('.th[data-sort]'), function (th) {
    th.addEventListener('click', function () {
      var key = th.dataset.sort;
      if (sortKey === key) sortDir = -sortDir; else { sortKey = key; sortDir = 1; }
      Array.prototype.forEach.call(document.querySelectorAll('.th'), function (o) { o.classList.remove('asc', 'desc'); });
      th.classList.add(sortDir === 1 ? 'asc' : 'desc');
      applyFilter();
    });
  });

  // ------------------------------------------------------------------ detail
  var overlay = $('detail');
  var CONTEXT = 3, CHANGED_MAX = 40, CHANGED_KEEP = 30, FIRST_LINES = 4;

  function blocksOf(d) {
    var out = [], a = 0, b = 0;
    for (var k = 0; k < d.bl.length; k += 3) {
      var n = d.bl[k + 1], m = d.bl[k + 2];
      out.push({ eq: d.bl[k] === 1, a: a, b: b, n: n, m: m });
      a += n; b += m;
    }
    return out;
  }

  function rangesOf(flat) {
    var m = {};
    for (var k = 0; k < flat.length; k += 3) (m[flat[k]] = m[flat[k]] || []).push([flat[k + 1], flat[k + 2]]);
    return m;
  }

  // Same folding as the terminal view (view/terminal.ts diffRows).
  function diffRows(blocks, full) {
    var rows = [], last = blocks.length - 1;
    blocks.forEach(function (b, bi) {
      var i;
      if (b.eq) {
        var keepHead = bi === 0 ? 0 : CONTEXT, keepTail = bi === last ? 0 : CONTEXT;
        if (full || b.n <= keepHead + keepTail + 1 || blocks.length === 1) {
          for (i = 0; i < b.n; i++) rows.push({ a: b.a + i, b: b.b + i });
          return;
        }
        for (i = 0; i < keepHead; i++) rows.push({ a: b.a + i, b: b.b + i });
        var hidden = b.n - keepHead - keepTail;
        var note = '⋯ ' + plural(hidden, 'unchanged line');
        rows.push({ fold: true, a: note, b: note });
        for (i = b.n - keepTail; i < b.n; i++) rows.push({ a: b.a + i, b: b.b + i });
        return;
      }
      var count = Math.max(b.n, b.m);
      var shown = full || count <= CHANGED_MAX ? count : CHANGED_KEEP;
      for (i = 0; i < shown; i++) rows.push({ a: i < b.n ? b.a + i : null, b: i < b.m ? b.b + i : null });
      if (shown < count) {
        var ha = Math.max(0, b.n - shown), hb = Math.max(0, b.m - shown);
        rows.push({ fold: true, a: ha ? '⋯ ' + plural(ha, 'more line') : null, b: hb ? '⋯ ' + plural(hb, 'more line') : null });
      }
    });
    return rows;
  }

  function lineInto(parent, text, ranges, side) {
    if (!ranges || !ranges.length) { parent.appendChild(document.createTextNode(text === '' ? ' ' : text)); return; }
    var pos = 0;
    ranges.forEach(function (r) {
      if (r[0] > pos) parent.appendChild(document.createTextNode(text.slice(pos, r[0])));
      parent.appendChild(el('mark', 'hl-' + side, text.slice(r[0], r[1])));
      pos = r[1];
    });
    if (pos < text.length) parent.appendChild(document.createTextNode(text.slice(pos)));
  }

  function cutNote(hidden, side) {
    return el('div', 'cut-note', (side === 'a' ? 'chosen' : 'rejected') + ': ' + hidden.toLocaleString('en-US') + ' more characters not embedded in this report');
  }

  function renderDiff(d, full) {
    var box = $('d-diff');
    var aL = d.a.split('\\n'), bL = d.b.split('\\n');
    var ha = rangesOf(d.ha), hb = rangesOf(d.hb);
    var rows = diffRows(blocksOf(d), full);
    var expand = function () { renderDiff(d, true); };
    var narrow = window.innerWidth < 820;
    box.replaceChildren();
    box.dataset.layout = narrow ? 'stacked' : 'side';
    if (!narrow) {
      var t = el('table', 'sbs');
      var cg = el('colgroup'); cg.appendChild(el('col')); cg.appendChild(el('col')); t.appendChild(cg);
      var thead = el('thead'), hr = el('tr');
      hr.appendChild(el('th', 'a', 'chosen (resolved)'));
      hr.appendChild(el('th', 'b', 'rejected (failed)'));
      thead.appendChild(hr); t.appendChild(thead);
      var tb = el('tbody');
      rows.forEach(function (r) {
        var tr = el('tr', r.fold ? 'fold' : 'line');
        if (r.fold) {
          tr.appendChild(el('td', 'a', r.a || ''));
          tr.appendChild(el('td', 'b', r.b || ''));
          tr.title = 'show everything';
          tr.addEventListener('click', expand);
        } else {
          var ta = el('td', r.a === null ? 'a absent' : 'a');
          var tdb = el('td', r.b === null ? 'b absent' : 'b');
          if (r.a !== null) lineInto(ta, aL[r.a], ha[r.a], 'a');
          if (r.b !== null) lineInto(tdb, bL[r.b], hb[r.b], 'b');
          tr.appendChild(ta); tr.appendChild(tdb);
        }
        tb.appendChild(tr);
      });
      t.appendChild(tb);
      box.appendChild(t);
      if (d.ma) box.appendChild(cutNote(d.ma, 'a'));
      if (d.mb) box.appendChild(cutNote(d.mb, 'b'));
      return;
    }
    ['a', 'b'].forEach(function (side) {
      box.appendChild(el('div', 'stack-head ' + side, side === 'a' ? 'chosen (resolved)' : 'rejected (failed)'));
      var s = el('div', 'stack ' + side);
      var lines = side === 'a' ? aL : bL, hl = side === 'a' ? ha : hb;
      rows.forEach(function (r) {
        var v = r[side];
        if (v === null || v === undefined) return;
        if (r.fold) { var f = el('div', 'fold', v); f.addEventListener('click', expand); s.appendChild(f); return; }
        var line = el('div', 'line');
        lineInto(line, lines[v], hl[v], side);
        s.appendChild(line);
      });
      box.appendChild(s);
      var hidden = side === 'a' ? d.ma : d.mb;
      if (hidden) box.appendChild(cutNote(hidden, side));
    });
  }

  function renderPrompt(i, d) {
    var box = $('d-prompt');
    box.replaceChildren();
    var total = C.plen[i], k = d.p.length;
    $('d-prompt-title').textContent = k === total ? 'prompt: ' + plural(total, 'message') : 'prompt: last ' + k + ' of ' + total + ' messages';
    d.p.forEach(function (m) {
      var idx = m[0], role = m[1], tool = m[2], text = m[3], more = m[4], calls = m[5];
      var msg = el('div', 'msg role-' + role);
      var head = el('div', 'msg-head');
      head.appendChild(el('span', 'idx', '[' + idx + ']'));
      head.appendChild(document.createTextNode(tool ? role + ' · ' + tool : role));
      msg.appendChild(head);
      var lines = text ? text.split('\\n') : [];
      var nonblank = lines.filter(function (l) { return l.trim() !== ''; });
      var shown = nonblank.slice(0, FIRST_LINES);
      if (shown.length) {
        var pre = el('pre', 'msg-body', shown.join('\\n'));
        msg.appendChild(pre);
        var hiddenLines = nonblank.length - shown.length;
        if (hiddenLines > 0 || more > 0) {
          var btn = el('button', 'more', hiddenLines > 0 ? '⋯ ' + plural(hiddenLines, 'more line') : '⋯ show all');
          btn.addEventListener('click', function () {
            pre.textContent = text + (more ? '\\n… ' + more.toLocaleString('en-US') + ' more characters not embedded in this report' : '');
            btn.remove();
          });
          msg.appendChild(btn);
        }
      }
      calls.forEach(function (c) { msg.appendChild(el('div', 'call', c)); });
      if (!shown.length && !calls.length) msg.appendChild(el('div', 'note', '(empty)'));
      box.appendChild(msg);
    });
    if (!d.p.length) box.appendChild(el('p', 'note', '(empty prompt)'));
  }

  var lastFocus = null;
  function open(i) {
    if (!(i >= 0 && i < N)) return;
    if (overlay.hidden) lastFocus = document.activeElement;
    current = i;
    var d = D.det[i];
    var repo = repoOf(i);
    $('d-title').textContent = 'pair #' + C.row[i] + '  ' + C.inst[i] + (repo ? '  (' + repo + ')' : '');
    $('d-meta').textContent = 'divergence turn ' + C.turn[i] + ' · message index ' + C.msg[i] + ' · action similarity ' + fmtSim(C.sim[i]) + ' · prompt ' + plural(C.plen[i], 'message');
    var ids = $('d-ids');
    ids.replaceChildren();
    ids.appendChild(el('span', 'who-a', 'chosen '));
    ids.appendChild(el('code', null, C.cid[i] + ' (resolved)'));
    ids.appendChild(el('span', 'who-b', 'rejected '));
    ids.appendChild(el('code', null, C.rid[i] + ' (failed)'));
    renderPrompt(i, d);
    $('d-action-title').textContent = 'action at message ' + C.msg[i] + ' (turn ' + C.turn[i] + ')';
    renderDiff(d, false);
    overlay.hidden = false;
    document.body.classList.add('modal-open');
    overlay.querySelector('.panel-body').scrollTop = 0;
    if (location.hash !== '#pair=' + C.row[i]) history.replaceState(null, '', '#pair=' + C.row[i]);
    $('d-close').focus();
    renderRows(true);
  }

  function close() {
    if (overlay.hidden) return;
    overlay.hidden = true;
    document.body.classList.remove('modal-open');
    history.replaceState(null, '', location.pathname + location.search);
    renderRows(true);
    if (lastFocus && lastFocus.focus) lastFocus.focus();
  }

  function step(delta) {
    var pos = view.indexOf(current);
    var next = pos < 0 ? 0 : pos + delta;
    if (next < 0 || next >= view.length) return;
    var top = next * ROW_H;
    if (top < vp.scrollTop || top > vp.scrollTop + vp.clientHeight - ROW_H) vp.scrollTop = Math.max(0, top - 3 * ROW_H);
    open(view[next]);
  }

  $('d-close').addEventListener('click', close);
  $('d-prev').addEventListener('click', function () { step(-1); });
  $('d-next').addEventListener('click', function () { step(1); });
  overlay.addEventListener('click', function (e) { if (e.target === overlay) close(); });
  document.addEventListener('keydown', function (e) {
    if (overlay.hidden) return;
    if (e.key === 'Escape') { e.preventDefault(); close(); }
    else if (e.key === 'ArrowRight' || e.key === 'j') { e.preventDefault(); step(1); }
    else if (e.key === 'ArrowLeft' || e.key === 'k') { e.preventDefault(); step(-1); }
  });
  var resizeTimer = 0;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      renderRows(true);
      if (!overlay.hidden && current >= 0) renderDiff(D.det[current], false);
    }, 120);
  });
  function fromHash() {
    var m = /^#pair=(\\d+)$/.exec(location.hash);
    if (!m) return;
    var row = Number(m[1]);
    for (var i = 0; i < N; i++) if (C.row[i] === row) { open(i); return; }
  }
  window.addEventListener('hashchange', fromHash);

  fillSelect('f-ct');
  fillSelect('f-rt');
  applyFilter();
  fromHash();
  document.body.dataset.ready = '1';
})();
`;
