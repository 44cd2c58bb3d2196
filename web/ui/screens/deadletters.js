// deadletters: the changes the engine refused for good (GET
// /api/v1/dead-letters[?index=], newest first) with the engine's error made
// readable; open one to see what would be written (GET .../{id}); replay
// one, an index's or all (POST .../replay: "replayed 2, 1 left"); discard
// one after a confirmation (DELETE .../{id}). Errors next to the control.
import { api, get } from '../api.js';
import { h, num, when, badge, section, errorSlot } from '../dom.js';

export const title = 'Dead letters';
export const order = 7;

// the engine's error text ({"type":..,"reason":..,"caused_by":..} as JSON
// or plain text) as one readable line: "type: reason; caused by type: reason"
export function readableError(text) {
  if (!text) return '';
  let e;
  try { e = JSON.parse(text); } catch (x) { return text; }
  if (!e || typeof e !== 'object') return text;
  const parts = [];
  for (let c = e, n = 0; c && typeof c === 'object' && n < 5; c = c.caused_by, n++) {
    const one = [c.type, c.reason].filter(Boolean).join(': ');
    if (one) parts.push(one);
  }
  return parts.length ? parts.join('; caused by ') : text;
}

function bodyText(body) {
  if (body === null || body === undefined) return '(none)';
  try { return JSON.stringify(JSON.parse(body), null, 2); } catch (e) { return String(body); }
}

export function mount(root) {
  const listErr = errorSlot(), replayErr = errorSlot();
  const filter = h('input', { id: 'dl-index', list: 'dl-indices', placeholder: 'every index',
                              autocomplete: 'off', spellcheck: false });
  const indices = h('datalist', { id: 'dl-indices' });
  const replayIndex = h('button', { type: 'button', id: 'dl-replay-index', disabled: true }, 'Replay this index’s');
  const replayAll = h('button', { type: 'button', id: 'dl-replay-all', class: 'quiet' }, 'Replay all');
  const refresh = h('button', { type: 'button', id: 'dl-refresh', class: 'quiet' }, 'Refresh');
  const result = h('p', { id: 'dl-result', class: 'muted', role: 'status' });
  const meta = h('p', { class: 'muted', id: 'dl-total' });
  const list = h('div', { id: 'dl-list', class: 'dl-list' });
  const detail = h('div', { id: 'dl-detail' });
  let lastList = [], loads = 0;
  root.append(h('h1', {}, 'Dead letters'),
    h('p', { class: 'muted' }, 'Changes the engine refused for good. Fix the cause the error gives ' +
      '(usually the mapping), then replay; a replay sends them with their original versions.'),
    section('Waiting',
      h('div', { class: 'actions' }, h('label', { for: 'dl-index' }, 'Index'), filter, indices,
        replayIndex, replayAll, refresh),
      replayErr, result, meta, listErr, list),
    detail);

  // body: {id} | {index} | {}; `left` is what waits in that index (or in
  // the whole source for one id or all)
  async function replay(body, btn, slot, what, one) {
    slot.show(null);
    btn.disabled = true;
    try {
      const r = await api('POST', '/api/v1/dead-letters/replay', body);
      await load();
      if (one) {
        // refused again: it is a dead letter again (same index and document)
        const again = lastList.some((x) => x.index === one.index && x.doc_id === one.doc_id);
        result.textContent = `${what}: replayed ${num(r.replayed)}, ` + (again
          ? 'refused again (see its new error)' : 'the engine took it') +
          `; ${num(r.left)} left in the source`;
      } else {
        result.textContent = `${what}: replayed ${num(r.replayed)}, ${num(r.left)} left` +
          (r.left > 0 ? ' (refused again: see the error of each)' : '');
      }
      result.dataset.replayed = r.replayed;
      result.dataset.left = r.left;
    } catch (e) {
      slot.show(e);
    } finally {
      btn.disabled = btn === replayIndex ? !filter.value.trim() : false;
    }
  }

  async function open(d) {
    let full;
    const err = errorSlot();
    detail.replaceChildren(section(`Dead letter ${d.id}`, err));
    try { full = await get(`/api/v1/dead-letters/${encodeURIComponent(d.id)}`); }
    catch (e) { err.show(e); return; }
    const facts = [
      ['Index', full.index], ['Document id', full.doc_id], ['Routing', full.routing ?? '–'],
      ['Operation', full.op], ['Version', String(full.version)], ['HTTP status', String(full.status)],
      ['Attempts', num(full.attempts)], ['Refused at', when(full.created_at)],
    ];
    detail.replaceChildren(h('section', { class: 'card', id: 'dl-open', 'data-id': full.id },
      h('div', { class: 'card-head' }, h('h2', {}, `Dead letter ${full.id}`),
        h('button', { type: 'button', class: 'quiet', onclick: () => detail.replaceChildren() }, 'Close')),
      h('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      h('h3', {}, 'Error'), h('p', { class: 'error-text dl-error' }, readableError(full.error)),
      h('details', {}, h('summary', {}, 'as the engine wrote it'), h('pre', { class: 'json' }, full.error || '')),
      h('h3', {}, full.script ? 'Script parameters' : 'Body'),
      full.script ? h('pre', { class: 'json' }, full.script) : '',
      h('pre', { class: 'json', id: 'dl-body' }, bodyText(full.body))));
    detail.scrollIntoView({ block: 'nearest' });
  }

  function card(d) {
    const err = errorSlot();
    const openBtn = h('button', { type: 'button', class: 'quiet', 'data-action': 'open' }, 'Open');
    const replayBtn = h('button', { type: 'button', 'data-action': 'replay' }, 'Replay');
    const discardBtn = h('button', { type: 'button', class: 'danger', 'data-action': 'discard' }, 'Discard');
    openBtn.addEventListener('click', () => open(d));
    replayBtn.addEventListener('click', () => replay({ id: d.id }, replayBtn, err, `dead letter ${d.id} (${d.doc_id})`, d));
    discardBtn.addEventListener('click', async () => {
      err.show(null);
      if (!confirm(`Discard dead letter ${d.id} (${d.index} / ${d.doc_id})? The change is given up: ` +
                   'the document stays as the engine has it until its row changes or a reindex.')) return;
      discardBtn.disabled = true;
      try {
        await api('DELETE', `/api/v1/dead-letters/${encodeURIComponent(d.id)}`);
        result.textContent = `dead letter ${d.id} discarded`;
        if (detail.querySelector(`[data-id="${d.id}"]`)) detail.replaceChildren();
        await load();
      } catch (e) { err.show(e); discardBtn.disabled = false; }
    });
    return h('article', { class: 'dl', 'data-dl-id': d.id, 'data-doc-id': d.doc_id },
      h('div', { class: 'dl-head' },
        h('strong', {}, `${d.index} / ${d.doc_id}`), badge(d.op), badge(`HTTP ${d.status}`, 'error'),
        h('span', { class: 'muted' }, `#${d.id} · ${when(d.created_at)} · ${num(d.attempts)} attempt${d.attempts === 1 ? '' : 's'}`)),
      h('p', { class: 'error-text dl-error' }, readableError(d.error)),
      h('div', { class: 'buttons' }, openBtn, replayBtn, discardBtn), err);
  }

  async function load() {
    const q = new URLSearchParams();
    if (filter.value.trim()) q.set('index', filter.value.trim());
    const mine = ++loads; // an answer to an older filter is dropped
    let r;
    try { r = await get(`/api/v1/dead-letters${q.size ? `?${q}` : ''}`); }
    catch (e) { if (mine === loads) listErr.show(e); return; }
    if (mine !== loads) return;
    listErr.show(null);
    lastList = r.dead_letters;
    const shown = r.dead_letters.length;
    meta.textContent = r.total === 0 ? 'No dead letter.'
      : `${num(r.total)} waiting${shown < r.total ? `, the newest ${num(shown)} shown` : ''}.`;
    meta.dataset.total = r.total;
    list.replaceChildren(...r.dead_letters.map(card));
    const seen = new Set([...indices.querySelectorAll('option')].map((o) => o.value));
    for (const d of r.dead_letters) {
      if (!seen.has(d.index)) { seen.add(d.index); indices.append(h('option', { value: d.index })); }
    }
  }

  filter.addEventListener('change', () => { replayIndex.disabled = !filter.value.trim(); result.textContent = ''; load(); });
  filter.addEventListener('input', () => { replayIndex.disabled = !filter.value.trim(); });
  replayIndex.addEventListener('click', () => {
    const ix = filter.value.trim();
    if (ix) replay({ index: ix }, replayIndex, replayErr, `index ${ix}`);
  });
  replayAll.addEventListener('click', () => {
    if (!confirm('Replay every dead letter of this source?')) return;
    replay({}, replayAll, replayErr, 'every dead letter');
  });
  refresh.addEventListener('click', load);
  // no polling: a row's error stays next to its buttons until the next action
  load();
  return null;
}
