// nodes: the daemons of this source (GET /api/v1/nodes, every 5 s): with
// ZooKeeper every registered node, its role and its part in the last
// rebalance of the reindex jobs (status, session, the jobs it runs), and a
// button that rebalances now (POST /api/v1/rebalance); standalone, the
// holder of the reader lock.
import { api, get } from '../api.js';
import { h, num, badge, table, errorSlot, every } from '../dom.js';

export const title = 'Nodes';
export const order = 3;

function jobsOf(e) {
  if (!e || !Array.isArray(e.jobs)) return '–';
  if (!e.jobs.length) return 'none';
  // a delayed run's job (type job) names its run instead of a version
  return e.jobs
    .map((j) => (j.type === 'job' ? `${j.index} delayed run ${j.delayed_run} #${j.bucket}`
                                  : `${j.index} v${j.version} #${j.bucket}`))
    .join(', ');
}

export function mount(root) {
  const err = errorSlot();
  const meta = h('p', { class: 'muted' });
  const body = h('div');
  const rbErr = errorSlot();
  const rbOut = h('p', { class: 'muted', 'data-role': 'rebalance-result' });
  const rbBtn = h('button', { type: 'button', 'data-action': 'rebalance', hidden: true },
    'Rebalance jobs now');
  rbBtn.addEventListener('click', async () => {
    rbBtn.disabled = true;
    rbOut.textContent = 'rebalancing: every node stops its jobs at their cursors…';
    try {
      const r = await api('POST', '/api/v1/rebalance');
      const parts = Object.entries(r.assign || {}).map(([n, ids]) => `${n}: ${ids.length ? ids.join(', ') : 'none'}`);
      rbOut.textContent = `jobs assigned — ${parts.length ? parts.join('; ') : 'no node answered'}`;
      rbErr.show(null);
    } catch (e) {
      rbOut.textContent = '';
      rbErr.show(e);
    } finally {
      rbBtn.disabled = false;
    }
  });
  root.append(h('h1', {}, 'Nodes'), meta, err, body, h('div', { class: 'actions' }, rbBtn), rbErr, rbOut);
  return every(5000, async () => {
    let n;
    try { n = await get('/api/v1/nodes'); err.show(null); } catch (e) { err.show(e); return; }
    meta.textContent = n.cluster ? `cluster ${n.cluster} (ZooKeeper)` : 'standalone (no [cluster] zookeeper)';
    rbBtn.hidden = !n.cluster;
    body.replaceChildren(table([
      { label: 'Node', cell: (x) => x.node },
      { label: 'Reader', cell: (x) => badge(x.entity && x.entity.reader || '–') },
      { label: 'Status', cell: (x) => x.entity && x.entity.node_status ? `${x.entity.cloud_status} / ${x.entity.node_status}` : '–' },
      { label: 'Session', class: 'num', cell: (x) => x.entity && x.entity.session_id ? x.entity.session_id : '–' },
      { label: 'Jobs', cell: (x) => jobsOf(x.entity) },
      { label: 'Running', class: 'num', cell: (x) => x.entity && x.entity.alive_work !== undefined ? num(x.entity.alive_work) : '–' },
      { label: 'PID', class: 'num', cell: (x) => x.entity && x.entity.pid !== undefined ? String(x.entity.pid) : '–' },
      { label: 'Fence', class: 'num', cell: (x) => x.entity && x.entity.fence !== undefined ? String(x.entity.fence) : '–' },
    ], n.nodes, 'No node holds the reader.'));
  });
}
