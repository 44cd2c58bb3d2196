// dom: small helpers shared by the screens: building elements (text only:
// no HTML strings, nothing from the API is ever parsed as markup),
// formatting figures and showing an API error next to its control.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function clear(el) { while (el.firstChild) el.firstChild.remove(); return el; }

// an <output> for the error of one control; show(err) / show(null)
export function errorSlot() {
  const el = h('p', { class: 'error', role: 'alert', hidden: true });
  el.show = (err) => {
    el.textContent = err ? (err.text || String(err.message || err)) : '';
    el.hidden = !err;
  };
  return el;
}

export function num(n) {
  if (n === null || n === undefined) return '–';
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

export function dur(s) {
  if (s === null || s === undefined || !isFinite(s)) return '–';
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function when(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

export function badge(text, kind) {
  return h('span', { class: `badge ${kind || text}` }, text);
}

// a table: columns [{label, cell: row => node|string, class}], rows
export function table(columns, rows, empty) {
  if (!rows || rows.length === 0) return h('p', { class: 'muted' }, empty || 'None.');
  return h('div', { class: 'table-wrap' },
    h('table', {},
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { class: c.class }, c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) =>
        h('td', { class: c.class, 'data-label': c.label }, c.cell(r))))))));
}

// a section with a heading and a body
export function section(title, ...body) {
  return h('section', { class: 'card' }, h('h2', {}, title), ...body);
}

// repeat fn every ms while the screen is shown; returns a stop function
export function every(ms, fn) {
  let stopped = false, timer = null;
  const tick = async () => {
    if (stopped) return;
    try { await fn(); } catch (e) { /* fn shows its own errors */ }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}
