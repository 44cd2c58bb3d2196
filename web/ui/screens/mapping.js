// mapping: the stored mapping (GET /api/v1/mapping, docs/mapping.md) per
// index config and table: columns with their types and keys, relations as a
// tree. Edits build a whole new file from it (the API takes whole files):
// add a table's generated mapping as a new index config, add a relation to
// a table (column, related table, join column, extend name, nested,
// flattened through a link table) or remove one, remove an index config, or
// edit the raw JSON. "Validate & plan" = POST /api/v1/mapping/plan (the plan,
// or every problem next to the editor); "Apply" (only after a plan with
// changes of the very same text) = POST /api/v1/mapping/apply.
// The file is kept as JSON text: numbers nobody touched are written back as
// they were read (mapping_view.js parseExact).
import { apiText, get } from '../api.js';
import { h, num, section, errorSlot } from '../dom.js';
import { parseExact, toText, colObj, indexView } from '../mapping_view.js';
import { ADD_KEY, generate, generatedView } from './sources.js';

export const title = 'Mapping';
export const order = 9;

export function mount(root) {
  let stored = '';      // the stored file, as GET /api/v1/mapping gave it, normalized
  let text = '';        // the file being edited (what plan/apply send)
  let planned = null;   // the text of the last plan with changes
  let sourceTables = null;

  const loadErr = errorSlot();
  const state = h('p', { class: 'muted', id: 'mapping-state' });
  const toPlan = h('button', { type: 'button', class: 'quiet small-btn', id: 'mapping-to-plan', hidden: true }, 'Validate & plan ↓');
  toPlan.addEventListener('click', () => {
    document.getElementById('mapping-editor').scrollIntoView({ block: 'start' });
    planBtn.click();
  });
  const indicesBox = h('div', { id: 'mapping-indices' });

  // ---- add an index config from a table's generated mapping
  const addTable = h('select', { id: 'add-table' });
  const addDepth = h('select', { id: 'add-depth' },
    [0, 1, 2, 3].map((d) => h('option', { value: d, selected: d === 1 }, String(d))));
  const addAlias = h('input', { id: 'add-alias', placeholder: 'the table’s name', autocomplete: 'off',
                                spellcheck: false, class: 'medium' });
  // replicas of the new index config: the generator proposes what the
  // engine's data nodes can hold (0 on a single node); empty: left to the
  // engine when the mapping is imported
  const addReplicas = h('input', { id: 'add-replicas', type: 'number', min: 0, max: 64, step: 1,
                                   placeholder: 'engine', inputmode: 'numeric', class: 'small' });
  const genBtn = h('button', { type: 'button', id: 'add-generate', class: 'quiet' }, 'Auto-generate');
  const addErr = errorSlot();
  addErr.id = 'add-error';
  const preview = h('div', { id: 'add-preview' });

  // ---- validate, plan, apply, raw JSON
  const planBtn = h('button', { type: 'button', id: 'mapping-plan' }, 'Validate & plan');
  const applyBtn = h('button', { type: 'button', id: 'mapping-apply', disabled: true }, 'Apply');
  const resetBtn = h('button', { type: 'button', id: 'mapping-reset', class: 'quiet' }, 'Discard edits');
  const planErr = errorSlot();
  planErr.id = 'plan-error';
  const planOut = h('div', { id: 'plan-out' });
  const raw = h('textarea', { id: 'mapping-raw', spellcheck: false, rows: 18, 'aria-label': 'The mapping file (JSON)' });
  const rawErr = errorSlot();
  rawErr.id = 'raw-error';

  root.append(h('h1', {}, 'Mapping'), h('div', { class: 'actions' }, state, toPlan), loadErr,
    section('Add an index config',
      h('p', { class: 'muted' }, 'From a table of the source: its columns and the relations its keys give ' +
        '(Sources shows every table).'),
      h('div', { class: 'actions' },
        h('label', { for: 'add-table' }, 'Root table'), addTable,
        h('label', { for: 'add-depth' }, 'Relation levels'), addDepth,
        h('label', { for: 'add-alias' }, 'Alias'), addAlias,
        h('label', { for: 'add-replicas' }, 'Replicas'), addReplicas, genBtn),
      addErr, preview),
    indicesBox,
    h('section', { class: 'card', id: 'mapping-editor' },
      h('h2', {}, 'Validate, plan, apply'),
      h('div', { class: 'actions' }, planBtn, applyBtn, resetBtn),
      planErr, planOut,
      h('details', { id: 'raw-box' }, h('summary', {}, 'Edit the raw JSON'),
        h('p', { class: 'muted' }, 'The whole file (docs/mapping.md). Edits here are what Validate & plan sends.'),
        raw, rawErr)));

  const current = () => parseExact(text);

  function setText(t, { keepPlan = false } = {}) {
    text = t;
    if (raw.value !== t) raw.value = t;
    if (!keepPlan) { planned = null; }
    applyBtn.disabled = planned === null || planned !== text;
    render();
  }

  // change the file: fn(file) edits the parsed file in place
  function edit(fn, slot) {
    slot.show(null);
    let p;
    try { p = current(); } catch (e) {
      slot.show(new Error(`the raw JSON does not parse (${e.message}): fix it below first`));
      return false;
    }
    if (p.lossy.length) {
      slot.show(new Error(`the file has numbers this browser cannot keep exact (${p.lossy.join(', ')}): edit the raw JSON instead`));
      return false;
    }
    try { fn(p.value); } catch (e) { slot.show(e); return false; }
    setText(toText(p.value));
    planOut.replaceChildren();
    planErr.show(null);
    return true;
  }

  function render() {
    let file;
    try { file = current().value; rawErr.show(null); } catch (e) {
      rawErr.show(new Error(`not JSON: ${e.message}`));
      state.textContent = 'The raw JSON does not parse: the tables below are the last good version.';
      return;
    }
    const ixs = file.indices || [];
    state.textContent = `${num(ixs.length)} index config(s). ` +
      (text === stored ? 'This is the stored mapping.' : 'Edited, not stored: validate and plan, then apply.');
    state.dataset.edited = text === stored ? 'no' : 'yes';
    toPlan.hidden = text === stored;
    indicesBox.replaceChildren(...ixs.map((ix, ii) => indexCard(ix, ii)));
  }

  function indexCard(ix, ii) {
    const err = errorSlot();
    const remove = h('button', { type: 'button', class: 'danger', 'data-action': 'remove-index' }, 'Remove index config');
    remove.addEventListener('click', () => {
      if (!confirm(`Remove the index config ${ix.alias} from the file? Its engine indices are left in place; ` +
                   'nothing is stored before Apply.')) return;
      edit((f) => { f.indices.splice(ii, 1); }, err);
    });
    const facts = [['Shards', ix.shards ?? 1], ['Replicas', ix.replicas ?? 'the engine’s default'],
      ['Versions kept', ix.history_retention ?? 2], ['Tables', (ix.tables || []).length]];
    return h('section', { class: 'card mapping-index', 'data-alias': ix.alias },
      h('div', { class: 'card-head' }, h('h2', {}, ix.alias), remove),
      h('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])),
      err,
      indexView(ix, {
        onRemove: (ti, path) => edit((f) => removeRelation(f.indices[ii].tables[ti], path), err),
        tableExtra: (t, ti) => relationForm(ii, ti, t, []),
        // inside a relation too (not inside a flattened one: its one inner
        // relation is the linked row)
        relExtra: (ti, rel, path) => (rel.flatten ? '' : relationForm(ii, ti, rel, path)),
      }));
  }

  function removeRelation(t, path) {
    let owner = t;
    for (const i of path.slice(0, -1)) owner = owner.relations[i];
    owner.relations.splice(path[path.length - 1], 1);
    if (owner.relations.length === 0) delete owner.relations;
  }

  // the form that adds a relation to table ti of index config ii (path [])
  // or to the relation at path inside it; t is that table or relation (its
  // table and columns)
  function relationForm(ii, ti, t, path) {
    const id = `rel-${ii}-${ti}${path.map((i) => `-${i}`).join('')}`;
    const cols = (t.columns || []).map(colObj).map((c) => c.name);
    const column = h('input', { id: `${id}-column`, list: `${id}-columns`, autocomplete: 'off', spellcheck: false,
                                required: true, class: 'medium' });
    const colList = h('datalist', { id: `${id}-columns` }, cols.map((c) => h('option', { value: c })));
    const related = h('select', { id: `${id}-table`, required: true }, h('option', { value: '' }, 'a table…'),
      (sourceTables || []).map((x) => h('option', { value: `${x.database}.${x.table}` }, `${x.database}.${x.table}`)));
    const join = h('input', { id: `${id}-join`, list: `${id}-joins`, autocomplete: 'off', spellcheck: false,
                              required: true, class: 'medium' });
    const joinList = h('datalist', { id: `${id}-joins` });
    const extend = h('input', { id: `${id}-extend`, autocomplete: 'off', spellcheck: false, required: true, class: 'medium' });
    const nested = h('input', { id: `${id}-nested`, type: 'checkbox' });
    const flatten = h('input', { id: `${id}-flatten`, type: 'checkbox' });
    const err = errorSlot();
    const add = h('button', { type: 'submit' }, 'Add the relation');
    const form = h('form', { class: 'relation-form', 'data-table': t.table, 'data-path': path.join('.') },
      h('div', { class: 'form-grid' },
        h('label', { for: column.id }, 'Column of ', h('code', {}, t.table)), h('span', {}, column, colList),
        h('label', { for: related.id }, 'Related table'), related,
        h('label', { for: join.id }, 'Its join column'), h('span', {}, join, joinList),
        h('label', { for: extend.id }, 'Extend name (the field)'), extend,
        h('span', {}, ''), h('label', { class: 'check' }, nested, ' nested array (one-to-many); unticked: an object'),
        h('span', {}, ''), h('label', { class: 'check' }, flatten,
          ' many-to-many: flatten through this link table (to the other table it references)')),
      h('div', { class: 'actions' }, add), err);

    related.addEventListener('change', async () => {
      joinList.replaceChildren();
      const [db, tbl] = related.value.split(/\.(.*)/s);
      if (!db) return;
      try {
        const g = await generate(db, tbl, 0);
        const rc = ((g.mapping.indices[0] || {}).tables || [{}])[0].columns || [];
        joinList.replaceChildren(...rc.map(colObj).map((c) => h('option', { value: c.name })));
      } catch (e) { /* no suggestions: type the column */ }
    });
    flatten.addEventListener('change', () => { if (flatten.checked) nested.checked = true; });
    nested.addEventListener('change', () => { if (!nested.checked) flatten.checked = false; });

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      err.show(null);
      const rel = { column: column.value.trim(), table: related.value, join_column: join.value.trim(),
                    extend_name: extend.value.trim() };
      if (!rel.column || !rel.table || !rel.join_column || !rel.extend_name) {
        err.show(new Error('column, related table, join column and extend name are all needed'));
        return;
      }
      if (nested.checked) rel.nested = true;
      if (flatten.checked) {
        // the link table's one-to-one relation to the other table it references
        add.disabled = true;
        try {
          const [db, tbl] = rel.table.split(/\.(.*)/s);
          const g = await generate(db, tbl, 1, true);
          const lt = ((g.mapping.indices[0] || {}).tables || [{}])[0];
          const inner = (lt.relations || []).filter((r) => !r.nested && r.table !== t.table);
          if (inner.length !== 1) {
            throw new Error(`${rel.table} is not a link table to flatten through: it has ${inner.length} ` +
              `reference(s) to a table other than ${t.table} (exactly one is needed); untick "many-to-many"`);
          }
          rel.flatten = true;
          rel.relations = [inner[0]];
        } catch (e) { err.show(e); return; } finally { add.disabled = false; }
      }
      edit((f) => {
        let owner = f.indices[ii].tables[ti];
        for (const i of path) owner = owner.relations[i];
        owner.relations = [...(owner.relations || []), rel];
      }, err);
    });
    const what = path.length ? `inside ${t.extend_name || t.table} (${t.table})` : `to ${t.table}`;
    return h('details', { class: path.length ? 'add-relation inner' : 'add-relation' },
      h('summary', {}, `Add a relation ${what}`), form);
  }

  // ---- add an index config
  let generated = null;
  let addBtn = null;
  // the replicas typed: a whole number, undefined (left to the engine), or
  // an error naming the field
  function replicasValue() {
    const v = addReplicas.value.trim();
    if (v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 64) throw new Error('replicas: a whole number from 0 to 64, or empty for the engine’s default');
    return n;
  }
  // the generated index config as the form's fields make it
  function fromFields() {
    const ix = { ...generated.mapping.indices[0], alias: addAlias.value.trim() };
    const r = replicasValue();
    if (r === undefined) delete ix.replicas; else ix.replicas = r;
    return ix;
  }
  // the preview follows the fields (what "Add to the file" adds)
  function renderPreview() {
    if (!generated || !addBtn) return;
    let ix;
    try { ix = fromFields(); addErr.show(null); } catch (e) { addErr.show(e); return; }
    preview.replaceChildren(h('div', { class: 'actions' }, addBtn),
      generatedView({ ...generated, mapping: { ...generated.mapping, indices: [ix] } }));
  }
  addAlias.addEventListener('input', renderPreview);
  addReplicas.addEventListener('input', renderPreview);
  async function runGenerate() {
    addErr.show(null);
    preview.replaceChildren();
    generated = null;
    const v = addTable.value;
    if (!v) { addErr.show(new Error('pick the root table (one with a primary key)')); return; }
    const [db, tbl] = v.split(/\.(.*)/s);
    genBtn.disabled = true;
    try {
      generated = await generate(db, tbl, addDepth.value);
    } catch (e) { addErr.show(e); return; } finally { genBtn.disabled = false; }
    if (!addAlias.value.trim()) addAlias.value = generated.mapping.indices[0].alias;
    const gr = generated.mapping.indices[0].replicas;
    addReplicas.value = gr === undefined ? '' : String(gr);
    addBtn = h('button', { type: 'button', id: 'add-index' }, 'Add to the file');
    addBtn.addEventListener('click', () => {
      const alias = addAlias.value.trim();
      if (edit((f) => {
        if (!alias) throw new Error('the alias is needed (lower case; the physical indices are <alias>_v<N>)');
        if ((f.indices || []).some((x) => x.alias === alias))
          throw new Error(`an index config ${alias} is in the file already: choose another alias`);
        f.indices = [...(f.indices || []), fromFields()];
      }, addErr)) {
        preview.replaceChildren(h('p', { class: 'muted' }, `${alias} added to the file below: validate and plan, then apply.`));
        generated = null;
        document.querySelector(`section.mapping-index[data-alias="${CSS.escape(alias)}"]`)?.scrollIntoView({ block: 'start' });
      }
    });
    renderPreview();
  }
  genBtn.addEventListener('click', runGenerate);
  addTable.addEventListener('change', () => { addAlias.value = ''; addReplicas.value = ''; generated = null; preview.replaceChildren(); });

  // ---- validate & plan, apply
  function showPlan(r, applied) {
    const lines = r.plan || [];
    planOut.replaceChildren(h('div', { class: 'plan', 'data-changes': r.changes, 'data-applied': applied ? 'yes' : 'no' },
      h('p', { class: applied ? 'ok-text' : '' }, applied
        ? `Applied: ${num(r.changes)} change(s) stored; the daemon takes them up (new index configs get their first build).`
        : r.changes === 0 ? 'Valid, and nothing to change: the file is the stored mapping.'
          : `Valid: ${num(r.changes)} change(s). Read the plan, then Apply.`),
      lines.length ? h('pre', { class: 'plan-lines' }, lines.join('\n')) : ''));
  }
  function showProblems(e) {
    const b = e.body || {};
    planErr.show(new Error(b.error || e.text));
    planOut.replaceChildren(b.problems && b.problems.length
      ? h('ul', { class: 'problems', id: 'plan-problems' }, b.problems.map((p) => h('li', { class: 'error-text' }, p)))
      : '');
  }
  planBtn.addEventListener('click', async () => {
    planErr.show(null);
    planOut.replaceChildren();
    planBtn.disabled = true;
    const sent = text;
    try {
      const r = JSON.parse(await apiText('POST', '/api/v1/mapping/plan', sent));
      showPlan(r, false);
      planned = r.changes > 0 ? sent : null;
      applyBtn.disabled = planned !== text;
    } catch (e) {
      if (e.status === 422) showProblems(e); else planErr.show(e);
    } finally { planBtn.disabled = false; }
  });
  applyBtn.addEventListener('click', async () => {
    if (planned !== text) { applyBtn.disabled = true; return; }
    planErr.show(null);
    applyBtn.disabled = true;
    try {
      const r = JSON.parse(await apiText('POST', '/api/v1/mapping/apply', text));
      await load();
      showPlan(r, r.applied);
    } catch (e) {
      if (e.status === 422) showProblems(e); else planErr.show(e);
      applyBtn.disabled = planned !== text;
    }
  });
  resetBtn.addEventListener('click', () => {
    if (text !== stored && !confirm('Discard every edit and show the stored mapping again?')) return;
    planOut.replaceChildren();
    planErr.show(null);
    setText(stored);
  });
  raw.addEventListener('input', () => {
    text = raw.value;
    planned = null;
    applyBtn.disabled = true;
  });
  raw.addEventListener('change', () => render());

  async function load() {
    let t;
    try { t = await apiText('GET', '/api/v1/mapping'); loadErr.show(null); } catch (e) { loadErr.show(e); return; }
    const p = parseExact(t);
    stored = p.lossy.length ? t : toText(p.value);
    setText(stored);
  }
  async function loadTables() {
    try {
      const r = await get('/api/v1/source/tables');
      sourceTables = r.tables;
    } catch (e) { addErr.show(e); return; }
    addTable.replaceChildren(h('option', { value: '' }, 'a table…'),
      ...sourceTables.map((x) => h('option', { value: `${x.database}.${x.table}`, disabled: x.primary_key.length === 0 },
        `${x.database}.${x.table}${x.primary_key.length ? '' : ' (no primary key)'}`)));
    if (text) render(); // the relation forms list the tables now
  }

  (async () => {
    await Promise.all([load(), loadTables()]);
    // handed over by the Sources screen's "Add to the mapping"
    const handed = sessionStorage.getItem(ADD_KEY);
    if (handed) {
      sessionStorage.removeItem(ADD_KEY);
      try {
        const a = JSON.parse(handed);
        addTable.value = `${a.db}.${a.table}`;
        addDepth.value = String(Math.min(3, Number(a.depth) || 0));
        await runGenerate();
      } catch (e) { addErr.show(e); }
    }
  })();
  return null;
}
