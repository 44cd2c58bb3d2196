// checks: the last 50 consistency checks (`searchsync check`), newest
// first, of every index or of one (GET /api/v1/checks,
// /api/v1/indices/{alias}/checks), with each run's differences.
import { get } from '../api.js';
import { h, num, when, badge, table, errorSlot, every } from '../dom.js';

export const title = 'Checks';
export const order = 4;

function detail(c) {
  if (c.error) return h('span', { class: 'error-text' }, c.error);
  const r = c.report;
  if (!r) return '';
  const ids = (list) => (list || []).slice(0, 20).map((x) => (typeof x === 'string' ? x : `${x.id} (${x.path})`)).join(', ');
  const parts = [];
  if (c.missing) parts.push(`missing: ${ids(r.missing)}`);
  if (c.extra) parts.push(`extra: ${ids(r.extra)}`);
  if (c.different) parts.push(`different: ${ids(r.different)}`);
  if (c.duplicate) parts.push(`duplicate: ${ids(r.duplicate)}`);
  if (r.repair) parts.push(`repair: ${num(r.repair.rebuilt)} rebuilt, ${num(r.repair.deleted)} deleted`);
  return parts.join('; ') || `${num(r.rows)} rows, ${num(r.engine_documents)} documents: clean`;
}

export function mount(root) {
  const err = errorSlot();
  const pick = h('select', { id: 'checks-index' }, h('option', { value: '' }, 'every index'));
  const body = h('div');
  root.append(h('h1', {}, 'Checks'),
              h('div', { class: 'actions' }, h('label', { for: 'checks-index' }, 'Index'), pick),
              err, body);
  get('/api/v1/indices').then((ix) => {
    pick.append(...ix.indices.map((i) => h('option', { value: i.alias }, i.alias)));
  }).catch((e) => err.show(e));
  async function load() {
    const path = pick.value ? `/api/v1/indices/${encodeURIComponent(pick.value)}/checks` : '/api/v1/checks';
    let c;
    try { c = await get(path); err.show(null); } catch (e) { err.show(e); return; }
    body.replaceChildren(table([
      { label: 'Id', class: 'num', cell: (x) => String(x.id) },
      { label: 'Index', cell: (x) => x.index },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Window', cell: (x) => (x.window_s ? `${x.window_s} s` : 'whole index') },
      { label: 'Trigger', cell: (x) => x.trigger },
      { label: 'Started', cell: (x) => when(x.started_at) },
      { label: 'Missing / extra / different', class: 'num', cell: (x) => `${num(x.missing)} / ${num(x.extra)} / ${num(x.different)}` },
      { label: 'Details', cell: detail },
    ], c.checks, 'No check has run yet (searchsync check, or [check] schedule).'));
  }
  pick.addEventListener('change', load);
  return every(10000, load);
}
