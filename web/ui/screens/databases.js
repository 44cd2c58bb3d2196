// databases: every source of the metadata schema (GET /api/v1/sources every
// 3 s): where it is, up or down, its lag, the node reading it and the index
// configs it feeds. "Add a database" posts a new source (POST
// /api/v1/sources), "Edit" changes one added so (PUT
// /api/v1/sources/{name}): the server is checked before anything is
// written, and a refusal is shown beside the field at fault. The password
// field is write-only: it is sent, then emptied; a source's password shows
// only as "set", and no answer carries it.
import { api, get } from '../api.js';
import { h, num, badge, errorSlot, every } from '../dom.js';

export const title = 'Databases';
export const order = 7.5;

const FIELDS = [
  // name, label, input attributes
  ['name', 'Name', { required: true, maxlength: 64, pattern: '[A-Za-z0-9_.\\-]+', placeholder: 'west' }],
  ['host', 'Host', { required: true, maxlength: 255, placeholder: 'db-west' }],
  ['port', 'Port', { type: 'number', min: 1, max: 65535, placeholder: '3306' }],
  ['user', 'User', { required: true, maxlength: 255, placeholder: 'repl' }],
  ['password', 'Password', { type: 'password', autocomplete: 'new-password' }],
  ['ssl_mode', 'TLS', { kind: 'select', options: ['', 'disabled', 'preferred', 'required', 'verify_ca', 'verify_identity'] }],
  ['ssl_ca', 'CA file', { maxlength: 1024, placeholder: '/etc/ssl/certs/db-ca.pem' }],
  ['server_id', 'Replica server id', { type: 'number', min: 1, placeholder: 'chosen' }],
  ['admin_listen', 'Admin listen', { maxlength: 255, placeholder: 'next free port, or none' }],
];

function state(s) {
  if (s.read === false) return badge('not read', 'failed');
  if (s.source_up === false) return badge('down', 'failed');
  if (s.source_up === true) return badge('up', 'live');
  return badge('unknown', 'idle');
}

// the form of one source: add (src null) or edit (src: the listed source)
function sourceForm(src, done) {
  const inputs = {};
  const slots = {};
  const top = errorSlot();
  top.dataset.role = 'form-error';
  const rows = FIELDS.filter(([f]) => !(src && f === 'name')).map(([f, label, a]) => {
    const id = `src-${src ? 'edit' : 'add'}-${f}`;
    const { kind, options, ...attrs } = a;
    const el = kind === 'select'
      ? h('select', { id, name: f }, options.map((o) => h('option', { value: o }, o || '(the default: preferred)')))
      : h('input', { id, name: f, autocomplete: 'off', ...attrs });
    if (src) {
      el.required = false;
      if (f === 'password') el.placeholder = src.password === 'set' ? 'set (type to change)' : '';
      else if (src[f] !== null && src[f] !== undefined) el.value = String(src[f]);
    } else if (f === 'password') {
      el.required = true;
    }
    inputs[f] = el;
    slots[f] = errorSlot();
    slots[f].dataset.errorFor = f;
    el.addEventListener('input', () => slots[f].show(null));
    return h('div', { class: 'field', 'data-field': f }, h('label', { for: id }, label), el, slots[f]);
  });
  const submit = h('button', { type: 'submit' }, src ? 'Save' : 'Check and add');
  const form = h('form', { class: 'source-form', id: src ? 'source-edit' : 'source-add', novalidate: true },
    ...rows, h('div', { class: 'buttons' }, submit), top);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    top.show(null);
    Object.values(slots).forEach((s) => s.show(null));
    const b = {};
    for (const [f, el] of Object.entries(inputs)) {
      const v = el.value.trim();
      if (!v) continue;
      if (src && f !== 'password' && String(src[f] ?? '') === v) continue; // unchanged
      b[f] = f === 'port' || f === 'server_id' ? Number(v) : v;
    }
    if (src && !Object.keys(b).length) { top.show({ text: 'Nothing changed.' }); return; }
    submit.disabled = true;
    submit.textContent = 'Checking the server…';
    try {
      const r = src ? await api('PUT', `/api/v1/sources/${encodeURIComponent(src.name)}`, b)
                    : await api('POST', '/api/v1/sources', b);
      inputs.password.value = ''; // write-only: gone from the page once sent
      if (!src) form.reset(); // added: the form is ready for the next one
      done(r);
    } catch (e) {
      inputs.password.value = '';
      if (e.field && slots[e.field]) { slots[e.field].show(e); inputs[e.field].focus(); }
      else top.show(e);
    } finally {
      submit.disabled = false;
      submit.textContent = src ? 'Save' : 'Check and add';
    }
  });
  return form;
}

export function mount(root) {
  const err = errorSlot();
  const meta = h('p', { class: 'muted' });
  const list = h('div', { id: 'sources' });
  const result = h('div', { id: 'source-result' });
  const editing = h('div', { id: 'source-editing' });
  const addCard = h('section', { class: 'card', id: 'source-add-card' }, h('h2', {}, 'Add a database'),
    h('p', { class: 'muted' }, 'The server is checked first (binlog ROW with full row images, its server_id, the user’s grants, the mapping’s tables); nothing is written unless it fits. Its configuration is written into the sources directory and searchsync@NAME starts from it.'),
    sourceForm(null, (r) => { shown(r, 'added'); load(); }));
  root.append(h('h1', {}, 'Databases'), meta, err, list, result, editing, addCard);

  function shown(r, verb) {
    result.replaceChildren(h('section', { class: 'card', 'data-role': 'source-done', 'data-source': r.name },
      h('h2', {}, `Source ${r.name} ${verb}`),
      h('p', {}, `${r.host}:${r.port} as ${r.user}, password set, replica server id ${r.server_id}.`),
      h('p', {}, 'Configuration: ', h('code', {}, r.config_path),
        r.admin_listen ? ` — its admin server on ${r.admin_listen}` : ' — no admin server of its own'),
      r.notes ? h('p', { class: 'muted' }, r.notes) : null,
      h('p', {}, r.systemd ? 'systemd’s searchsync-sources.path starts it; by hand: ' : 'Start it: ',
        h('code', {}, r.start))));
  }

  function edit(s) {
    editing.replaceChildren(h('section', { class: 'card', 'data-editing': s.name },
      h('h2', {}, `Edit ${s.name}`),
      h('p', { class: 'muted' }, 'The values changed are checked on the server before they are saved; its process is restarted with them.'),
      sourceForm(s, (r) => { editing.replaceChildren(); shown(r, 'changed'); load(); })));
    editing.scrollIntoView({ block: 'start' });
  }

  async function load() {
    let r;
    try { r = await get('/api/v1/sources'); err.show(null); } catch (e) { err.show(e); return; }
    meta.textContent = `${num(r.sources.length)} source(s) in the metadata schema; this daemon reads ${r.source}. ` +
      `New sources are written into ${r.sources_dir}.`;
    if (!r.sources.length) { list.replaceChildren(h('p', { class: 'muted' }, 'No source yet.')); return; }
    list.replaceChildren(h('div', { class: 'table-wrap' }, h('table', { id: 'sources-table' },
      h('thead', {}, h('tr', {}, ['Source', 'Server', 'State', 'Lag', 'Reader', 'Index configs', ''].map((x) => h('th', {}, x)))),
      h('tbody', {}, r.sources.map((s) => {
        const actions = h('td', { class: 'row-actions' });
        if (s.registered) {
          const b = h('button', { type: 'button', class: 'quiet', 'data-action': 'edit' }, 'Edit');
          b.addEventListener('click', () => edit(s));
          actions.append(b);
        }
        return h('tr', { 'data-source': s.name },
          h('td', { 'data-label': 'Source' }, h('code', {}, s.name), s.name === r.source ? ' (this daemon)' : ''),
          h('td', { 'data-label': 'Server' }, s.host ? `${s.host}:${s.port} as ${s.user}` : h('span', { class: 'muted' }, 'its own configuration')),
          h('td', { 'data-label': 'State', 'data-role': 'state' }, state(s),
            s.source_error ? h('div', { class: 'muted' }, s.source_error) : null),
          h('td', { 'data-label': 'Lag', class: 'num', 'data-role': 'lag' }, s.lag_s === null ? '–' : `${num(s.lag_s)} s`),
          h('td', { 'data-label': 'Reader', 'data-role': 'reader' }, s.reader_node || '–'),
          h('td', { 'data-label': 'Index configs', 'data-role': 'index-configs' }, s.index_configs.join(', ') || '–'),
          actions);
      })))));
  }
  return every(3000, load);
}
