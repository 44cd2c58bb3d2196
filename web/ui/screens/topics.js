// topics: the Kafka topics of a source read from Kafka ([source] kind =
// kafka; GET /api/v1/topics every 3 s): where each comes from, whether the
// daemon is subscribed and Kafka has it, and per partition the saved offset,
// the next one read, the end and the lag. A form adds a topic (POST
// /api/v1/topics, with its own format if needed); a topic of the metadata
// has a Remove button (DELETE /api/v1/topics/{topic}); those of the
// configuration are changed there. Left out of the navigation for a binlog
// source (available(): the API's 409).
import { api, get, ApiError } from '../api.js';
import { h, num, badge, when, errorSlot, every } from '../dom.js';

export const title = 'Topics';
export const order = 8.5;

export async function available() {
  try { await get('/api/v1/topics'); return true; }
  catch (e) { return !(e instanceof ApiError && e.status === 409); }
}

const FORMATS = ['', 'auto', 'canal-json', 'debezium', 'maxwell'];

function state(t, reading) {
  if (t.missing) return badge('missing', 'failed');
  if (t.subscribed) return badge('subscribed', 'live');
  return badge(reading ? 'not read' : 'not reading now', 'idle');
}

function parts(t) {
  if (!t.partitions.length) return h('span', { class: 'muted' }, 'no offsets yet');
  return h('table', { class: 'inner' },
    h('thead', {}, h('tr', {}, ['Partition', 'Saved', 'Read', 'End', 'Lag'].map((x) => h('th', { class: 'num' }, x)))),
    h('tbody', {}, t.partitions.map((p) => h('tr', { 'data-partition': p.partition },
      h('td', { class: 'num' }, String(p.partition)),
      h('td', { class: 'num', 'data-role': 'saved' }, num(p.saved)),
      h('td', { class: 'num' }, num(p.read)),
      h('td', { class: 'num' }, num(p.end)),
      h('td', { class: 'num', 'data-role': 'lag' }, num(p.lag))))));
}

export function mount(root) {
  const err = errorSlot();
  const meta = h('p', { class: 'muted' });
  const body = h('div');
  const topic = h('input', { id: 'topic-new', name: 'topic', required: true, maxlength: 249,
                             autocomplete: 'off', placeholder: 'cdc.orders' });
  const format = h('select', { id: 'topic-format' },
    FORMATS.map((f) => h('option', { value: f }, f || '[kafka] format')));
  const addErr = errorSlot();
  addErr.id = 'topic-add-error';
  const form = h('form', { class: 'actions', id: 'topic-add' },
    h('label', { for: 'topic-new' }, 'Topic'), topic,
    h('label', { for: 'topic-format' }, 'Format'), format,
    h('button', { type: 'submit' }, 'Add'));
  root.append(h('h1', {}, 'Topics'), meta, err,
    h('section', { class: 'card' }, h('h2', {}, 'Add a topic'),
      h('p', { class: 'muted' }, 'The running daemon subscribes within seconds; a new topic is read from the consumer group\'s committed offsets, else from [source] start.'),
      form, addErr),
    h('section', { class: 'card' }, h('h2', {}, 'Topics read'), body));

  function row(t, reading) {
    const rmErr = errorSlot();
    const cells = [
      h('td', { 'data-label': 'Topic', class: 'topic' }, t.topic),
      h('td', { 'data-label': 'From' }, t.from.join(', ') + (t.format ? ` (${t.format})` : '')),
      h('td', { 'data-label': 'State' }, state(t, reading)),
      h('td', { 'data-label': 'Lag', class: 'num', 'data-role': 'lag' }, num(t.lag)),
      h('td', { 'data-label': 'Partitions' }, parts(t)),
    ];
    const actions = h('td', { class: 'row-actions' });
    if (t.from.includes('metadata')) {
      const rm = h('button', { type: 'button', class: 'danger', 'data-action': 'remove' }, 'Remove');
      rm.addEventListener('click', async () => {
        rm.disabled = true;
        rmErr.show(null);
        try { await api('DELETE', `/api/v1/topics/${encodeURIComponent(t.topic)}`); await load(); }
        catch (e) { rmErr.show(e); rm.disabled = false; }
      });
      actions.append(h('div', { class: 'buttons' }, rm), rmErr);
      if (t.added_at) actions.append(h('p', { class: 'muted' }, `added ${when(t.added_at)}`));
    }
    return h('tr', { 'data-topic': t.topic }, ...cells, actions);
  }

  async function load() {
    let r;
    try { r = await get('/api/v1/topics'); err.show(null); } catch (e) { err.show(e); return; }
    meta.textContent = `source ${r.source}, [kafka] format ${r.format}` +
      (r.regex ? `, topics matching ${r.regex}` : '') +
      (r.reading ? '' : ' — this node does not read the source now (standing by or starting)');
    if (!r.topics.length) { body.replaceChildren(h('p', { class: 'muted' }, 'No topic.')); return; }
    body.replaceChildren(h('div', { class: 'table-wrap' }, h('table', { id: 'topics' },
      h('thead', {}, h('tr', {}, ['Topic', 'From', 'State', 'Lag', 'Partitions', ''].map((x) => h('th', {}, x)))),
      h('tbody', {}, r.topics.map((t) => row(t, r.reading))))));
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    addErr.show(null);
    const b = { topic: topic.value.trim() };
    if (format.value) b.format = format.value;
    try {
      await api('POST', '/api/v1/topics', b);
      topic.value = '';
      await load();
    } catch (e) {
      addErr.show(e);
      if (e.field === 'topic') topic.focus();
    }
  });
  topic.addEventListener('input', () => addErr.show(null));
  return every(3000, load);
}
