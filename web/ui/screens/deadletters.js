// deadletters: the changes the engine refused for good (GET
// /api/v1/dead-letters[?index=&source=], newest first) with the engine's
// error made readable and the source each came from; open one to see what
// would be written (GET .../{id}); replay one, an index's or all (POST
// .../replay: "replayed 2, 1 left"); discard one after a confirmation
// (DELETE .../{id}). Errors next to the control.
//
// Several sources feeding one index share the metadata schema, so this
// daemon lists every source's dead letters (the Source filter: its own by
// default, another's, or every source's), but replays and discards only
// its own: another source's are sent by that source's daemon, which reads
// its server and keeps its versions (docs/operations.md, "Dead letters of
// several sources"). Their buttons are off, and say where to go.
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
  // '' until the first answer names this daemon's source; '*' every source
  const sourcePick = h('select', { id: 'dl-source' }, h('option', { value: '' }, 'this daemon’s'));
  const otherNote = h('p', { id: 'dl-other', class: 'muted', hidden: true });
  const indices = h('datalist', { id: 'dl-indices' });
  const replayIndex = h('button', { type: 'button', id: 'dl-replay-index', disabled: true }, 'Replay this index’s');
  const replayAll = h('button', { type: 'button', id: 'dl-replay-all', class: 'quiet', title: 'every dead letter of this daemon’s source' }, 'Replay all');
  const refresh = h('button', { type: 'button', id: 'dl-refresh', class: 'quiet' }, 'Refresh');
  const result = h('p', { id: 'dl-result', class: 'muted', role: 'status' });
  const meta = h('p', { class: 'muted', id: 'dl-total' });
  const list = h('div', { id: 'dl-list', class: 'dl-list' });
  const detail = h('div', { id: 'dl-detail' });
  let lastList = [], loads = 0, own = '';
  root.append(h('h1', {}, 'Dead letters'),
    h('p', { class: 'muted' }, 'Changes the engine refused for good. Fix the cause the error gives ' +
      '(usually the mapping), then replay; a replay sends them with their original versions.'),
    section('Waiting',
      h('div', { class: 'actions' }, h('label', { for: 'dl-source' }, 'Source'), sourcePick,
        h('label', { for: 'dl-index' }, 'Index'), filter, indices,
        replayIndex, replayAll, refresh),
      otherNote, replayErr, result, meta, listErr, list),
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
      btn.disabled = !ownShown() || (btn === replayIndex && !filter.value.trim());
    }
  }

  async function open(d) {
    let full;
    const err = errorSlot();
    detail.replaceChildren(section(`Dead letter ${d.id}`, err));
    const of = d.source === own ? '' : `?source=${encodeURIComponent(d.source)}`;
    try { full = await get(`/api/v1/dead-letters/${encodeURIComponent(d.id)}${of}`); }
    catch (e) { err.show(e); return; }
    const facts = [
      ['Source', full.source], ['Index', full.index], ['Document id', full.doc_id], ['Routing', full.routing ?? '–'],
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

  // the dead letters shown include this daemon's own (the ones it replays)
  function ownShown() { return !sourcePick.value || sourcePick.value === own || sourcePick.value === '*'; }
  function elsewhere(source) {
    return `replayed by the daemon of source ${source} (its admin UI, or searchsync dead-letters ` +
      `replay with its configuration): this one reads ${own || 'another source'}`;
  }

  function card(d) {
    const err = errorSlot();
    const mine = d.source === own;
    const openBtn = h('button', { type: 'button', class: 'quiet', 'data-action': 'open' }, 'Open');
    const replayBtn = h('button', { type: 'button', 'data-action': 'replay', disabled: !mine,
                                    title: mine ? undefined : elsewhere(d.source) }, 'Replay');
    const discardBtn = h('button', { type: 'button', class: 'danger', 'data-action': 'discard', disabled: !mine,
                                     title: mine ? undefined : elsewhere(d.source) }, 'Discard');
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
    return h('article', { class: 'dl', 'data-dl-id': d.id, 'data-doc-id': d.doc_id, 'data-source': d.source },
      h('div', { class: 'dl-head' },
        h('strong', {}, `${d.index} / ${d.doc_id}`), badge(d.op), badge(`HTTP ${d.status}`, 'error'),
        h('span', { class: 'dl-source', title: 'the source whose change this is' }, `source ${d.source}`),
        h('span', { class: 'muted' }, `#${d.id} · ${when(d.created_at)} · ${num(d.attempts)} attempt${d.attempts === 1 ? '' : 's'}`)),
      h('p', { class: 'error-text dl-error' }, readableError(d.error)),
      h('div', { class: 'buttons' }, openBtn, replayBtn, discardBtn,
        mine ? '' : h('span', { class: 'muted dl-elsewhere' }, `replayed by the daemon of source ${d.source}`)), err);
  }

  async function load() {
    const q = new URLSearchParams();
    if (filter.value.trim()) q.set('index', filter.value.trim());
    if (sourcePick.value) q.set('source', sourcePick.value);
    const mine = ++loads; // an answer to an older filter is dropped
    let r;
    try { r = await get(`/api/v1/dead-letters${q.size ? `?${q}` : ''}`); }
    catch (e) { if (mine === loads) listErr.show(e); return; }
    if (mine !== loads) return;
    listErr.show(null);
    own = r.source;
    sources(r);
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

  // the Source filter's choices: this daemon's source first, then every
  // source that has dead letters (of the index filter) with how many, then
  // all of them; the choice is kept
  function sources(r) {
    const picked = sourcePick.value || own;
    const counts = new Map(r.by_source.map((b) => [b.source, b.total]));
    const all = r.by_source.reduce((n, b) => n + b.total, 0);
    const names = [own, ...r.by_source.map((b) => b.source).filter((s) => s !== own)];
    if (picked !== '*' && !names.includes(picked)) names.push(picked);
    sourcePick.replaceChildren(
      ...names.map((s) => h('option', { value: s },
        `${s}${s === own ? ' (this daemon’s)' : ''} · ${num(counts.get(s) || 0)}`)),
      h('option', { value: '*' }, `every source · ${num(all)}`));
    sourcePick.value = picked;
    const other = picked !== own && picked !== '*';
    otherNote.hidden = !other;
    otherNote.textContent = other ? `Source ${picked}’s dead letters are ${elsewhere(picked)}.` : '';
    replayAll.disabled = other;
    replayIndex.disabled = other || !filter.value.trim();
  }

  sourcePick.addEventListener('change', () => { result.textContent = ''; load(); });
  filter.addEventListener('change', () => { replayIndex.disabled = !ownShown() || !filter.value.trim(); result.textContent = ''; load(); });
  filter.addEventListener('input', () => { replayIndex.disabled = !ownShown() || !filter.value.trim(); });
  replayIndex.addEventListener('click', () => {
    const ix = filter.value.trim();
    if (ix) replay({ index: ix }, replayIndex, replayErr, `index ${ix} of source ${own}`);
  });
  replayAll.addEventListener('click', () => {
    if (!confirm(`Replay every dead letter of source ${own}? (Other sources' are replayed by their own daemons.)`)) return;
    replay({}, replayAll, replayErr, `every dead letter of source ${own}`);
  });
  refresh.addEventListener('click', load);
  // no polling: a row's error stays next to its buttons until the next action
  load();
  return null;
}
