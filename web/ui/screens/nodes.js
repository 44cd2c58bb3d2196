// nodes: the daemons of this source (GET /api/v1/nodes, every 5 s): with
// ZooKeeper every registered node and its role, else the holder of the
// standalone reader lock.
import { get } from '../api.js';
import { h, num, badge, table, errorSlot, every } from '../dom.js';

export const title = 'Nodes';
export const order = 3;

export function mount(root) {
  const err = errorSlot();
  const meta = h('p', { class: 'muted' });
  const body = h('div');
  root.append(h('h1', {}, 'Nodes'), meta, err, body);
  return every(5000, async () => {
    let n;
    try { n = await get('/api/v1/nodes'); err.show(null); } catch (e) { err.show(e); return; }
    meta.textContent = n.cluster ? `cluster ${n.cluster} (ZooKeeper)` : 'standalone (no [cluster] zookeeper)';
    body.replaceChildren(table([
      { label: 'Node', cell: (x) => x.node },
      { label: 'Reader', cell: (x) => badge(x.entity && x.entity.reader || '–') },
      { label: 'Status', cell: (x) => x.entity && x.entity.node_status ? `${x.entity.cloud_status} / ${x.entity.node_status}` : '–' },
      { label: 'Jobs', class: 'num', cell: (x) => x.entity && x.entity.jobs ? num(x.entity.jobs.length) : '–' },
      { label: 'PID', class: 'num', cell: (x) => x.entity && x.entity.pid !== undefined ? String(x.entity.pid) : '–' },
      { label: 'Fence', class: 'num', cell: (x) => x.entity && x.entity.fence !== undefined ? String(x.entity.fence) : '–' },
    ], n.nodes, 'No node holds the reader.'));
  });
}
