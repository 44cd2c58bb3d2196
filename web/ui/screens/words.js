// words: the IK analyzer's dynamic words (GET/POST /api/v1/words, PUT and
// DELETE /api/v1/words/{id}, POST .../publish): add a word (state init),
// change it while it is init, publish it into /dict/ext.txt or
// /dict/stop.txt (cannot be undone), delete it. Each row shows the API's
// error next to the control that caused it.
import { api, get } from '../api.js';
import { h, when, badge, errorSlot } from '../dom.js';

export const title = 'Dynamic words';
export const order = 6;

const KINDS = [['ext', 'extension word'], ['stop', 'stop word']];
const kindSelect = (id, value) => h('select', { id },
  KINDS.map(([k, label]) => h('option', { value: k, selected: k === value }, label)));

export function mount(root) {
  const word = h('input', { id: 'word-new', name: 'word', required: true, maxlength: 255,
                            autocomplete: 'off', placeholder: 'a word' });
  const kind = kindSelect('word-kind', 'ext');
  const addErr = errorSlot();
  addErr.id = 'word-add-error';
  const form = h('form', { class: 'actions', id: 'word-add' },
    h('label', { for: 'word-new' }, 'Word'), word,
    h('label', { for: 'word-kind' }, 'Kind'), kind,
    h('button', { type: 'submit' }, 'Add'));
  const listErr = errorSlot();
  const filterKind = h('select', { id: 'words-kind' }, h('option', { value: '' }, 'every kind'),
                       KINDS.map(([k, l]) => h('option', { value: k }, l)));
  const filterStatus = h('select', { id: 'words-status' }, h('option', { value: '' }, 'every state'),
                         ['init', 'published'].map((s) => h('option', { value: s }, s)));
  const tbody = h('tbody');
  const list = h('div', { class: 'table-wrap' }, h('table', { id: 'words' },
    h('thead', {}, h('tr', {}, ['Word', 'Kind', 'State', 'Updated', ''].map((t) => h('th', {}, t)))),
    tbody));
  const empty = h('p', { class: 'muted', hidden: true }, 'No word.');
  root.append(h('h1', {}, 'Dynamic words'),
    h('p', { class: 'muted' }, 'Published words are served to the engine in ',
      h('a', { href: '/dict/ext.txt' }, '/dict/ext.txt'), ' and ',
      h('a', { href: '/dict/stop.txt' }, '/dict/stop.txt'), '.'),
    h('section', { class: 'card' }, h('h2', {}, 'Add a word'), form, addErr),
    h('section', { class: 'card' }, h('h2', {}, 'Words'),
      h('div', { class: 'actions' },
        h('label', { for: 'words-kind' }, 'Kind'), filterKind,
        h('label', { for: 'words-status' }, 'State'), filterStatus),
      listErr, list, empty));

  function row(w) {
    const err = errorSlot();
    const tr = h('tr', { 'data-word-id': w.id, 'data-status': w.status });
    const act = async (btn, fn) => {
      err.show(null);
      btn.disabled = true;
      try { await fn(); await load(); } catch (e) { err.show(e); btn.disabled = false; }
    };
    const view = () => {
      const buttons = [];
      if (w.status === 'init') {
        const edit = h('button', { type: 'button', class: 'quiet', 'data-action': 'edit' }, 'Edit');
        edit.addEventListener('click', () => editing());
        const pub = h('button', { type: 'button', 'data-action': 'publish' }, 'Publish');
        pub.addEventListener('click', () => act(pub, () => api('POST', `/api/v1/words/${w.id}/publish`)));
        buttons.push(edit, pub);
      }
      const del = h('button', { type: 'button', class: 'danger', 'data-action': 'delete' }, 'Delete');
      del.addEventListener('click', () => {
        if (w.status === 'published' && !confirm(`Delete the published word “${w.word}”? It leaves the dictionary file.`)) return;
        act(del, () => api('DELETE', `/api/v1/words/${w.id}`));
      });
      buttons.push(del);
      tr.replaceChildren(
        h('td', { 'data-label': 'Word', class: 'word' }, w.word),
        h('td', { 'data-label': 'Kind' }, w.kind),
        h('td', { 'data-label': 'State' }, badge(w.status)),
        h('td', { 'data-label': 'Updated' }, when(w.updated_at)),
        h('td', { class: 'row-actions' }, h('div', { class: 'buttons' }, buttons), err));
    };
    const editing = () => {
      const input = h('input', { value: w.word, 'aria-label': 'Word', maxlength: 255, class: 'word-edit' });
      const k = kindSelect(`word-kind-${w.id}`, w.kind);
      k.setAttribute('aria-label', 'Kind');
      const save = h('button', { type: 'button', 'data-action': 'save' }, 'Save');
      const cancel = h('button', { type: 'button', class: 'quiet' }, 'Cancel');
      save.addEventListener('click', () => {
        const body = {};
        if (input.value !== w.word) body.word = input.value;
        if (k.value !== w.kind) body.kind = k.value;
        if (Object.keys(body).length === 0) { view(); return; }
        act(save, () => api('PUT', `/api/v1/words/${w.id}`, body));
      });
      cancel.addEventListener('click', () => { err.show(null); view(); });
      tr.replaceChildren(
        h('td', { 'data-label': 'Word' }, input),
        h('td', { 'data-label': 'Kind' }, k),
        h('td', { 'data-label': 'State' }, badge(w.status)),
        h('td', { 'data-label': 'Updated' }, when(w.updated_at)),
        h('td', { class: 'row-actions' }, h('div', { class: 'buttons' }, save, cancel), err));
      input.focus();
    };
    view();
    return tr;
  }

  async function load() {
    const q = new URLSearchParams();
    if (filterKind.value) q.set('kind', filterKind.value);
    if (filterStatus.value) q.set('status', filterStatus.value);
    let r;
    try { r = await get(`/api/v1/words${q.size ? `?${q}` : ''}`); listErr.show(null); }
    catch (e) { listErr.show(e); return; }
    tbody.replaceChildren(...r.words.map(row));
    empty.hidden = r.words.length > 0;
    list.hidden = r.words.length === 0;
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    addErr.show(null);
    try {
      await api('POST', '/api/v1/words', { word: word.value, kind: kind.value });
      word.value = '';
      await load();
    } catch (e) {
      addErr.show(e);
      if (e.field === 'word') word.focus();
    }
  });
  word.addEventListener('input', () => addErr.show(null));
  filterKind.addEventListener('change', load);
  filterStatus.addEventListener('change', load);
  load();
  return null;
}
