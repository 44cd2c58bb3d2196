// sources: the source's databases and tables (GET /api/v1/source/tables),
// grouped by database, with the rows estimate and the primary key (a table
// without one cannot be a root). "Auto-generate" asks for the mapping the
// live schema gives a table (GET /api/v1/source/tables/{db}/{table}/mapping
// ?depth=N) and shows its columns, its relations (objects, nested arrays,
// many-to-many flattened), the guesses made without foreign keys and one
// document built with it. "Add to the mapping" hands the table to the
// Mapping screen, where the plan is shown before anything is stored.
import { apiText, get } from '../api.js';
import { h, num, badge, table, section, errorSlot } from '../dom.js';
import { parseExact, columnsTable, relationTree, jsonBlock } from '../mapping_view.js';

export const title = 'Sources';
export const order = 8;

export const ADD_KEY = 'mapping-add'; // sessionStorage: {db, table, depth} for the Mapping screen

// forRelations: only its relations are wanted (a link table, whose composite
// primary key would be refused as a document id)
export async function generate(db, tbl, depth, forRelations = false) {
  const text = await apiText('GET', `/api/v1/source/tables/${encodeURIComponent(db)}/` +
    `${encodeURIComponent(tbl)}/mapping?depth=${encodeURIComponent(depth)}` +
    (forRelations ? '&for=relations' : ''));
  return parseExact(text).value;
}

// what a generated mapping holds, for one table (shared with Mapping)
export function generatedView(g) {
  const ix = (g.mapping.indices || [])[0] || {};
  const root = (ix.tables || [])[0] || {};
  const replicas = ix.replicas === undefined ? 'the engine’s default replicas' : `${ix.replicas} replica(s)`;
  return h('div', { class: 'generated' },
    h('p', { class: 'generated-head' }, 'Alias ', h('code', { 'data-field': 'alias' }, ix.alias || '?'),
      ', root table ', h('code', {}, root.table || '?'),
      ' · ', h('span', { 'data-field': 'shards' }, `${ix.shards ?? 1} shard(s)`),
      ', ', h('span', { 'data-field': 'replicas' }, replicas)),
    h('h3', {}, 'Columns'), columnsTable(root.columns),
    h('h3', {}, 'Relations'), relationTree(root.relations, root.columns),
    h('h3', {}, 'Guesses'),
    g.guesses && g.guesses.length
      ? h('ul', { class: 'guesses' }, g.guesses.map((x) => h('li', {}, x.replace(/^searchsync mapping generate: /, ''))))
      : h('p', { class: 'muted' }, 'None: every relation comes from a foreign key.'),
    h('h3', {}, 'A document built with it'),
    g.sample ? jsonBlock(g.sample, { class: 'json sample' })
      : h('p', { class: 'muted' }, g.sample_note || 'The table has no row.'));
}

export function mount(root) {
  const err = errorSlot();
  const depth = h('select', { id: 'gen-depth' },
    [0, 1, 2, 3, 4, 5].map((d) => h('option', { value: d, selected: d === 2 }, String(d))));
  const dbs = h('div', { id: 'source-dbs' });
  const out = h('div', { id: 'generated' });
  const meta = h('p', { class: 'muted' });
  let shows = 0;
  root.append(h('h1', {}, 'Sources and tables'), meta,
    h('div', { class: 'actions' }, h('label', { for: 'gen-depth' }, 'Relation levels for Auto-generate'), depth),
    err, dbs, out);

  async function show(t, btn, slot) {
    slot.show(null);
    btn.disabled = true;
    out.replaceChildren(section(`Generating the mapping of ${t.database}.${t.table}…`));
    const mine = ++shows; // a later click wins
    try {
      const g = await generate(t.database, t.table, depth.value);
      if (mine !== shows) return;
      const add = h('button', { type: 'button', id: 'gen-add' }, 'Add to the mapping…');
      add.addEventListener('click', () => {
        sessionStorage.setItem(ADD_KEY, JSON.stringify({ db: t.database, table: t.table, depth: depth.value }));
        location.hash = '#mapping';
      });
      out.replaceChildren(h('section', { class: 'card', id: 'gen-result', 'data-table': `${t.database}.${t.table}` },
        h('div', { class: 'card-head' }, h('h2', {}, `Generated mapping: ${t.database}.${t.table}`), add),
        generatedView(g)));
      out.scrollIntoView({ block: 'start' });
    } catch (e) {
      if (mine !== shows) return;
      out.replaceChildren();
      slot.show(e);
    } finally {
      btn.disabled = false;
    }
  }

  async function load() {
    let r;
    try { r = await get('/api/v1/source/tables'); err.show(null); } catch (e) { err.show(e); return; }
    const by = new Map();
    for (const t of r.tables) {
      if (!by.has(t.database)) by.set(t.database, []);
      by.get(t.database).push(t);
    }
    meta.textContent = `${num(by.size)} database(s), ${num(r.tables.length)} table(s) on the source ` +
      '(the metadata schema left out).';
    dbs.replaceChildren(...[...by].map(([db, ts]) => h('section', { class: 'card', 'data-db': db },
      h('h2', {}, db),
      table([
        { label: 'Table', cell: (t) => h('code', { 'data-table': `${t.database}.${t.table}` }, t.table) },
        { label: 'Rows (estimate)', class: 'num', cell: (t) => num(t.rows_estimate) },
        { label: 'Engine', cell: (t) => t.engine || '–' },
        { label: 'Primary key', cell: (t) => (t.primary_key.length
          ? t.primary_key.join(', ')
          : h('span', { class: 'no-pk' }, badge('no primary key', 'error'), ' not usable as a root')) },
        { label: '', class: 'row-actions', cell: (t) => {
          const slot = errorSlot();
          const btn = h('button', { type: 'button', class: 'quiet', 'data-action': 'generate',
                                    'data-table': `${t.database}.${t.table}` }, 'Auto-generate');
          btn.addEventListener('click', () => show(t, btn, slot));
          if (!t.primary_key.length) {
            btn.disabled = true;
            btn.title = 'a root table needs a primary key (or mark a unique column "key" by hand in the mapping)';
          }
          return h('div', {}, btn, slot);
        } },
      ], ts))));
  }
  load();
  return null;
}
