// mapping_view: what the Sources and Mapping screens share about a mapping
// file (docs/mapping.md): reading its JSON text without rounding a number,
// writing it back, and showing a table's columns and its relations as a
// tree (extend name, object / nested array / many-to-many flattened, join
// columns). Nothing here calls the API.
import { h, badge, table } from './dom.js';

// JSON text -> value, keeping every number exactly as written: one that a
// JavaScript number would change (an integer above 2^53, "1.50") is kept as
// its source text with JSON.rawJSON, which JSON.stringify writes back as it
// was. `lossy` lists the numbers that could not be kept (a browser without
// JSON.rawJSON): structured edits are then refused (the raw text still works).
export function parseExact(text) {
  const lossy = [];
  const canRaw = typeof JSON.rawJSON === 'function';
  const value = JSON.parse(text, function (key, v, ctx) {
    if (typeof v !== 'number' || !ctx || typeof ctx.source !== 'string') return v;
    if (String(v) === ctx.source) return v;
    if (canRaw) return JSON.rawJSON(ctx.source);
    if (!/^-?\d+$/.test(ctx.source) || !Number.isSafeInteger(v)) lossy.push(ctx.source);
    return v;
  });
  return { value, lossy };
}

export const toText = (file) => `${JSON.stringify(file, null, 2)}\n`;

// a column of the file ("name" or an object) as an object
export const colObj = (c) => (typeof c === 'string' ? { name: c } : c || {});

export function columnsTable(columns, empty) {
  const cols = (columns || []).map(colObj);
  const extra = (c) => {
    const bits = [];
    if (c.analyzer) bits.push(`analyzer ${c.analyzer}`);
    if (c.keyword) bits.push('.keyword');
    if (c.index === false) bits.push('not indexed');
    if (c.copy_to) bits.push(`copy_to ${c.copy_to}`);
    if (c.extend_name) bits.push(`relations: ${c.extend_name}${c.nested ? ' (nested)' : ''}`);
    return bits.join(', ');
  };
  return table([
    { label: 'Column', cell: (c) => h('code', {}, c.name) },
    { label: 'MySQL type', cell: (c) => c.mysql_type || '–' },
    { label: 'Engine type', cell: (c) => c.type || 'default' },
    { label: 'Key', cell: (c) => (c.key ? badge('key', 'live') : '') },
    { label: 'Notes', cell: (c) => extra(c) },
  ], cols, empty || 'Every column of the table (filled in from the source on import).');
}

// the field name and kind a relation gives, with its column's defaults
export function relationName(rel, ownerColumns) {
  const col = (ownerColumns || []).map(colObj).find((c) => c.name === rel.column) || {};
  const name = rel.extend_name || col.extend_name || '';
  const nested = rel.nested !== undefined ? !!rel.nested : !!col.nested;
  return { name, nested };
}

function relationKind(rel, nested) {
  if (rel.flatten) return badge('many-to-many, flattened', 'building');
  return nested ? badge('nested array', 'building') : badge('object', 'live');
}

// relations as nested lists. opts.onRemove(path), when given, adds a
// "Remove" button per relation (path: indices from the top list down);
// opts.relExtra(rel, path), what to show under each relation (the form that
// adds a relation inside it).
// flattenedBy: the flattened relation these are inside (its one inner
// relation is the linked row, the array's element, and needs no name)
export function relationTree(relations, ownerColumns, opts = {}, path = [], flattenedBy = null) {
  if (!relations || relations.length === 0) return h('p', { class: 'muted' }, 'No relation.');
  return h('ul', { class: 'tree' }, relations.map((rel, i) => {
    const here = [...path, i];
    const r = relationName(rel, ownerColumns);
    const nested = r.nested;
    const name = r.name || (flattenedBy ? `(each element of ${flattenedBy})` : '');
    const cols = rel.columns ? rel.columns.map(colObj) : null;
    const remove = opts.onRemove
      ? h('button', { type: 'button', class: 'danger small-btn', 'data-action': 'remove-relation',
                      'data-relation': r.name, onclick: () => opts.onRemove(here) }, 'Remove')
      : '';
    const bits = [];
    if (rel.where) bits.push(`where ${rel.where}`);
    if (rel.refresh_parent === false) bits.push('changes do not refresh the document');
    if (rel.area_update) bits.push('area update');
    if (rel.distinct) bits.push('distinct');
    return h('li', { class: 'relation', 'data-relation': r.name, 'data-table': rel.table },
      h('div', { class: 'relation-head' },
        h('strong', {}, name || '(no extend name)'), relationKind(rel, nested), remove),
      h('div', { class: 'muted relation-join' },
        h('code', {}, rel.column), ' → ', h('code', {}, `${rel.table}.${rel.join_column}`),
        bits.length ? ` · ${bits.join(' · ')}` : ''),
      h('details', {}, h('summary', {}, cols ? `${cols.length} columns` : 'every column'),
        columnsTable(cols)),
      rel.relations && rel.relations.length
        ? relationTree(rel.relations, rel.columns, opts, here, rel.flatten ? (name || 'the array') : null) : '',
      opts.relExtra ? opts.relExtra(rel, here) : '');
  }));
}

// a table's settings besides its columns and relations, as one line
function tableSettings(t, ti) {
  const bits = [];
  if (t.join_name) bits.push(`join name ${t.join_name}`);
  if (t.parent_column) bits.push(`parent column ${t.parent_column}`);
  if (t.mode && t.mode !== 're-query') bits.push(`mode ${t.mode}`);
  if (t.delay_effect) bits.push('delay effect (changes applied by the delayed run)');
  if (t.bucket_column) bits.push(`bucket column ${t.bucket_column}`);
  if (t.daily_check_column) bits.push(`check column ${t.daily_check_column}`);
  if (t.expiry_column) bits.push(`expiry column ${t.expiry_column}`);
  if (t.where) bits.push(`only rows where ${t.where}`);
  if (t.copy_to) bits.push(`copy_to ${t.copy_to}`);
  if (t.relation_top) bits.push('a hand-written relation_top');
  return bits.length ? h('p', { class: 'muted table-settings' }, bits.join(' · ')) : '';
}

// a table of an index that only carries settings for a table relations read
const settingsOnly = (t, ti) => ti > 0 && !t.parent && !t.columns && !t.relations;

// a whole index config of a file: its tables with their columns and relations
export function indexView(ix, opts = {}) {
  const tables = (ix.tables || []).map((t, ti) => h('div', { class: 'table-config', 'data-table': t.table },
    h('h3', {}, h('code', {}, t.table), ti === 0 ? badge('root', 'live') : '',
      t.parent ? badge(`child of ${t.parent}`) : '', settingsOnly(t, ti) ? badge('settings of a related table') : ''),
    tableSettings(t, ti),
    settingsOnly(t, ti) ? '' : columnsTable(t.columns),
    settingsOnly(t, ti) ? '' : [h('h4', {}, 'Relations'),
      relationTree(t.relations, t.columns, {
        onRemove: opts.onRemove ? (p) => opts.onRemove(ti, p) : undefined,
        relExtra: opts.relExtra ? (rel, p) => opts.relExtra(ti, rel, p) : undefined,
      }),
      opts.tableExtra ? opts.tableExtra(t, ti) : '']));
  return h('div', { class: 'index-config' }, tables);
}

// a document as pretty JSON text (read-only)
export function jsonBlock(v, attrs) {
  return h('pre', { class: 'json', ...(attrs || {}) }, JSON.stringify(v, null, 2));
}
