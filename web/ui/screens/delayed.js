// delayed: the delayed runs (GET /api/v1/delayed/runs), the change
// snapshots waiting for them or failed (GET /api/v1/delayed/snapshots
// ?status=...), with the counts per table and status, and the relation tops
// the runs follow from a changed row to the documents (GET
// /api/v1/delayed/relation-tops).
import { get } from '../api.js';
import { h, num, when, badge, table, section, errorSlot, every } from '../dom.js';

export const title = 'Delayed runs';
export const order = 5;

export function mount(root) {
  const runsErr = errorSlot(), snapErr = errorSlot();
  const runs = h('div'), counts = h('div'), snaps = h('div');
  const topsErr = errorSlot(), tops = h('div', { id: 'delayed-tops' });
  const pick = h('select', { id: 'snapshots-status' },
    ['', 'init', 'running', 'error', 'done'].map((s) => h('option', { value: s }, s || 'not done')));
  root.append(h('h1', {}, 'Delayed runs and snapshots'),
    section('Runs', runsErr, runs),
    section('Change snapshots',
      h('div', { class: 'actions' }, h('label', { for: 'snapshots-status' }, 'Status'), pick),
      snapErr, counts, snaps),
    section('Relation tops', topsErr, tops));

  async function loadRuns() {
    let r;
    try { r = await get('/api/v1/delayed/runs'); runsErr.show(null); } catch (e) { runsErr.show(e); return; }
    runs.replaceChildren(table([
      { label: 'Id', class: 'num', cell: (x) => String(x.id) },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Index', cell: (x) => x.index || 'all' },
      { label: 'Node', cell: (x) => x.node || '–' },
      { label: 'Snapshots', class: 'num', cell: (x) => num(x.snapshots) },
      { label: 'Ids', class: 'num', cell: (x) => num(x.ids) },
      { label: 'Rebuilt / deleted', class: 'num', cell: (x) => `${num(x.documents_rebuilt)} / ${num(x.documents_deleted)}` },
      { label: 'Errors', class: 'num', cell: (x) => num(x.errors) },
      { label: 'Started', cell: (x) => when(x.started_at) },
      { label: 'Finished', cell: (x) => when(x.finished_at) },
      { label: 'Error', cell: (x) => x.error || '' },
    ], r.runs, 'No delayed run yet.'));
  }
  async function loadSnaps() {
    const q = pick.value ? `?status=${encodeURIComponent(pick.value)}` : '';
    let s;
    try { s = await get(`/api/v1/delayed/snapshots${q}`); snapErr.show(null); } catch (e) { snapErr.show(e); return; }
    counts.replaceChildren(table([
      { label: 'Table', cell: (x) => x.table },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Count', class: 'num', cell: (x) => num(x.count) },
    ], s.counts, 'No change snapshot.'));
    snaps.replaceChildren(s.snapshots && s.snapshots.length ? table([
      { label: 'Id', class: 'num', cell: (x) => String(x.id) },
      { label: 'Table', cell: (x) => `${x.db}.${x.table}` },
      { label: 'Operation', cell: (x) => x.operation },
      { label: 'Id of the row', cell: (x) => x.business_id },
      { label: 'Status', cell: (x) => badge(x.status) },
      { label: 'Attempts', class: 'num', cell: (x) => num(x.attempts) },
      { label: 'Updated', cell: (x) => when(x.updated_at) },
      { label: 'Error', cell: (x) => x.error || '' },
    ], s.snapshots) : '');
  }
  async function loadTops() {
    let t;
    try { t = await get('/api/v1/delayed/relation-tops'); topsErr.show(null); } catch (e) { topsErr.show(e); return; }
    tops.replaceChildren(table([
      { label: 'Changed table', cell: (x) => `${x.db}.${x.table}` },
      { label: 'Index', cell: (x) => x.index || '–' },
      { label: 'Path', class: 'num', cell: (x) => String(x.path) },
      { label: 'Level', class: 'num', cell: (x) => String(x.level) },
      { label: 'SQL', cell: (x) => h('code', {}, x.sql) },
      { label: 'Gives', cell: (x) => x.output_column },
      { label: 'Origin', cell: (x) => x.origin },
    ], t.levels, 'No relation top yet (written by the first delayed run).'));
  }
  pick.addEventListener('change', loadSnaps);
  const a = every(10000, loadRuns), b = every(10000, loadSnaps), c = every(30000, loadTops);
  return () => { a(); b(); c(); };
}
