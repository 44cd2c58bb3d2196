// history: what happened, for the operator looking back — each index
// config's builds (GET /api/v1/indices/{alias}/runs: status, rows read,
// documents written, rejected, the rate, the error of a failed one) and the
// sync log (GET /api/v1/sync-log: mapping imports, builds queued and
// switched, resets, deletions, checks), newest first, optionally one event.
import { get } from '../api.js';
import { h, num, when, badge, table, errorSlot, every } from '../dom.js';

export const title = 'History';
export const order = 10;

function secs(s) {
  return s === null || s === undefined ? '–' : `${Number(s).toFixed(1)} s`;
}

export function mount(root) {
  const err = errorSlot();
  const logErr = errorSlot();
  const builds = h('div', { id: 'history-builds' });
  const eventPick = h('select', { id: 'history-event' }, h('option', { value: '' }, 'every event'));
  const log = h('div', { id: 'history-log' });
  root.append(h('h1', {}, 'History'),
              h('h2', {}, 'Builds'), err, builds,
              h('h2', {}, 'Sync log'),
              h('div', { class: 'actions' }, h('label', { for: 'history-event' }, 'Event'), eventPick),
              logErr, log);
  const events = new Set();

  async function loadBuilds() {
    let ix;
    try { ix = await get('/api/v1/indices'); err.show(null); } catch (e) { err.show(e); return; }
    const rows = [];
    for (const i of ix.indices) {
      let r;
      try { r = await get(`/api/v1/indices/${encodeURIComponent(i.alias)}/runs`); } catch (e) { err.show(e); return; }
      for (const run of r.runs) rows.push({ alias: i.alias, ...run });
    }
    rows.sort((a, b) => String(b.started_at).localeCompare(String(a.started_at)));
    builds.replaceChildren(table([
      { label: 'Index', cell: (x) => x.alias },
      { label: 'Version', class: 'num', cell: (x) => String(x.version) },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Started', cell: (x) => when(x.started_at) },
      { label: 'Took', class: 'num', cell: (x) => secs(x.seconds) },
      { label: 'Rows read', class: 'num', cell: (x) => num(x.rows_read) },
      { label: 'Documents', class: 'num', cell: (x) => num(x.docs_written) },
      { label: 'Rejected', class: 'num', cell: (x) => num(x.rejected) },
      { label: 'Docs/s', class: 'num', cell: (x) => num(x.docs_per_second) },
      { label: 'Error', cell: (x) => (x.error ? h('span', { class: 'error-text' }, x.error) : '') },
    ], rows, 'No build yet.'));
  }

  async function loadLog() {
    const q = eventPick.value ? `&event=${encodeURIComponent(eventPick.value)}` : '';
    let l;
    try { l = await get(`/api/v1/sync-log?limit=200${q}`); logErr.show(null); } catch (e) { logErr.show(e); return; }
    for (const e of l.entries) {
      if (!events.has(e.event)) {
        events.add(e.event);
        eventPick.append(h('option', { value: e.event }, e.event));
      }
    }
    log.replaceChildren(table([
      { label: 'At', cell: (x) => when(x.at) },
      { label: 'Index', cell: (x) => x.index || '' },
      { label: 'Event', cell: (x) => x.event },
      { label: 'Detail', cell: (x) => x.detail || '' },
      { label: 'Node', cell: (x) => x.node || '' },
    ], l.entries, 'Nothing logged yet.'));
  }

  eventPick.addEventListener('change', loadLog);
  const stopBuilds = every(10000, loadBuilds);
  const stopLog = every(10000, loadLog);
  return () => { stopBuilds(); stopLog(); };
}
