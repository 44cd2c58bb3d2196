// indices: each index config with its state, versions and where its alias
// points (GET /api/v1/indices, /api/v1/status); "Reindex" queues a full
// rebuild (POST /api/v1/indices/{alias}/reindex) and a progress bar follows
// it (GET .../reindex every 0.4 s: documents written of the estimate, the
// live version's document count, with rate and ETA) until the alias moves;
// "Cancel build" resets a build in progress (POST .../reindex/reset).
// "Delete all…" deletes every engine index of the config (history and
// available ones, and so the alias: POST .../delete-all) once the alias is
// typed again; the config stays, unavailable until the next reindex.
import { api, get } from '../api.js';
import { h, num, dur, when, badge, table, section, errorSlot, every } from '../dom.js';

export const title = 'Indices';
export const order = 2;

const LIST_MS = 5000, PROGRESS_MS = 400; // a build in progress is watched closely

function versionsTable(ix, targets) {
  return table([
    { label: 'Version', cell: (v) => `v${v.version}` },
    { label: 'Engine index', cell: (v) => h('span', {}, v.index,
        targets.includes(v.index) ? h('span', { class: 'badge live' }, 'alias') : '') },
    { label: 'State', cell: (v) => badge(v.state) },
    { label: 'Created', cell: (v) => when(v.created_at) },
    { label: 'Switched', cell: (v) => when(v.switched_at) },
  ], ix.versions, 'No version yet.');
}

// one index config's card; update(ix, statusRow) refreshes it in place
function indexCard(alias, refreshList) {
  const head = h('div', { class: 'card-head' });
  const facts = h('dl', { class: 'facts' });
  const versions = h('div');
  const buckets = h('input', { type: 'number', min: 1, max: 4096, placeholder: 'default',
                               id: `buckets-${alias}`, class: 'small', inputmode: 'numeric' });
  const reindexBtn = h('button', { type: 'button', 'data-action': 'reindex' }, 'Reindex');
  const resetBtn = h('button', { type: 'button', class: 'danger', 'data-action': 'reset', hidden: true },
                     'Cancel build');
  const deleteBtn = h('button', { type: 'button', class: 'danger', 'data-action': 'delete-all' }, 'Delete all…');
  const actionErr = errorSlot();
  actionErr.dataset.for = alias;
  // the confirmation: the alias typed again enables the button
  const confirmIn = h('input', { id: `delete-confirm-${alias}`, autocomplete: 'off', spellcheck: false,
                                 class: 'medium', placeholder: alias });
  const confirmBtn = h('button', { type: 'submit', class: 'danger', disabled: true }, 'Delete every engine index');
  const deleteErr = errorSlot();
  const deleteOut = h('p', { class: 'muted', 'data-delete-result': alias });
  const deleteForm = h('form', { class: 'delete-all', hidden: true, 'data-alias': alias },
    h('p', {}, 'Every engine index of ', h('code', {}, alias), ' is deleted — the live version, the ' +
      'history and the available ones — and with them the alias: searches through it find nothing until ' +
      'the next reindex. The index config stays. Type ', h('code', {}, alias), ' to confirm.'),
    h('div', { class: 'actions' }, h('label', { for: confirmIn.id }, 'Alias'), confirmIn, confirmBtn),
    deleteErr);
  const bar = h('progress', { id: `progress-${alias}`, max: 100 });
  const barText = h('p', { class: 'progress-text', 'data-progress-text': alias });
  const jobs = h('div', { class: 'jobs' });
  const progressBox = h('div', { class: 'progress-box', hidden: true, 'data-alias': alias },
                        h('h3', {}, 'Build'), bar, barText, jobs);
  const el = h('section', { class: 'card index', 'data-alias': alias },
    head, facts,
    h('div', { class: 'actions' },
      h('label', { for: `buckets-${alias}` }, 'Buckets'), buckets, reindexBtn, resetBtn, deleteBtn),
    actionErr, deleteForm, deleteOut, progressBox,
    h('details', {}, h('summary', {}, 'Versions'), versions));

  let estimate = null, building = null, samples = [], stopProgress = null, lastIx = null;

  function followBuild() {
    if (stopProgress) return;
    progressBox.hidden = false;
    bar.dataset.state = 'building';
    samples = [];
    stopProgress = every(PROGRESS_MS, async () => {
      let p;
      try { p = await get(`/api/v1/indices/${encodeURIComponent(alias)}/reindex`); }
      catch (e) { barText.textContent = e.text; return; }
      renderProgress(p);
    });
  }

  function stopFollowing() {
    if (stopProgress) { stopProgress(); stopProgress = null; }
  }

  function renderProgress(p) {
    const done = (p.jobs || []).reduce((a, j) => a + (j.docs_written || 0), 0);
    const rows = (p.jobs || []).reduce((a, j) => a + (j.rows_read || 0), 0);
    jobs.replaceChildren(table([
      { label: 'Bucket', cell: (j) => String(j.bucket) },
      { label: 'Status', cell: (j) => badge(j.status) },
      { label: 'Rows read', class: 'num', cell: (j) => num(j.rows_read) },
      { label: 'Documents', class: 'num', cell: (j) => num(j.docs_written) },
      { label: 'Rejected', class: 'num', cell: (j) => num(j.rejected) },
      { label: 'Error', cell: (j) => j.error || '' },
    ], p.jobs, 'No job yet.'));
    if (p.building_version !== null) {
      building = p.building_version;
      resetBtn.hidden = false;
      const now = Date.now();
      samples.push([now, done]);
      while (samples.length > 2 && now - samples[0][0] > 15000) samples.shift();
      const [t0, d0] = samples[0];
      const rate = now > t0 ? ((done - d0) * 1000) / (now - t0) : 0;
      if (estimate) {
        const pct = Math.min(99, Math.floor((done * 100) / estimate));
        bar.value = pct;
        const eta = rate > 0 ? Math.max(0, estimate - done) / rate : null;
        barText.textContent = `v${building} (${p.state}): ${num(done)} of ~${num(estimate)} documents ` +
          `(${pct}%), ${num(rows)} rows read · ${num(Math.round(rate))}/s · ETA ${dur(eta)}`;
      } else {
        bar.removeAttribute('value'); // no estimate: indeterminate
        barText.textContent = `v${building} (${p.state}): ${num(done)} documents, ${num(rows)} rows read · ` +
          `${num(Math.round(rate))}/s`;
      }
      bar.dataset.state = 'building';
      return;
    }
    // the build is over: done (the alias moved), failed or cancelled
    stopFollowing();
    resetBtn.hidden = true;
    const run = p.last_run || {};
    if (run.status === 'done') {
      bar.value = 100;
      barText.textContent = `v${run.version} done: ${num(run.docs_written)} documents, ${num(run.rows_read)} ` +
        `rows read; the alias ${alias} now points at v${p.current_version}`;
    } else {
      barText.textContent = `v${run.version || building || '?'} ${run.status || 'ended'}` +
        (run.error ? `: ${run.error}` : '');
    }
    bar.dataset.state = run.status || 'ended';
    building = null;
    refreshList();
  }

  reindexBtn.addEventListener('click', async () => {
    actionErr.show(null);
    const n = buckets.value.trim();
    reindexBtn.disabled = true;
    try {
      const r = await api('POST', `/api/v1/indices/${encodeURIComponent(alias)}/reindex`,
                          n ? { buckets: Number(n) } : undefined);
      // the estimate: the documents the live version holds now
      estimate = lastIx && lastIx.documents ? lastIx.documents : null;
      bar.value = 0;
      barText.textContent = `v${r.version} queued (${r.index}, ${r.buckets} buckets)`;
      building = r.version;
      stopFollowing();
      followBuild();
      refreshList(); // the state and building version it now has
    } catch (e) {
      actionErr.show(e);
    } finally {
      reindexBtn.disabled = false;
    }
  });

  resetBtn.addEventListener('click', async () => {
    actionErr.show(null);
    if (!confirm(`Cancel the build of ${alias}? Its new engine index is deleted.`)) return;
    try {
      const r = await api('POST', `/api/v1/indices/${encodeURIComponent(alias)}/reindex/reset`);
      barText.textContent = `v${r.cancelled_version} cancelled; ${alias} is ${r.state}`;
    } catch (e) {
      actionErr.show(e);
    }
  });

  deleteBtn.addEventListener('click', () => {
    deleteForm.hidden = !deleteForm.hidden;
    confirmIn.value = '';
    confirmBtn.disabled = true;
    deleteErr.show(null);
    if (!deleteForm.hidden) confirmIn.focus();
  });
  confirmIn.addEventListener('input', () => { confirmBtn.disabled = confirmIn.value !== alias; });
  deleteForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (confirmIn.value !== alias) return;
    deleteErr.show(null);
    confirmBtn.disabled = true;
    try {
      const r = await api('POST', `/api/v1/indices/${encodeURIComponent(alias)}/delete-all`,
                          { confirm: confirmIn.value });
      deleteForm.hidden = true;
      deleteOut.textContent = `Every engine index of ${r.alias} deleted; it is ${r.state} until the next reindex.`;
      refreshList();
    } catch (e) {
      deleteErr.show(e);
      confirmBtn.disabled = confirmIn.value !== alias;
    }
  });

  // an index config over shard tables: its pattern, how many shards it reads
  // now and which (folded: a family may have hundreds)
  function shardList(alias, f) {
    const n = f.shards.length;
    return h('details', { 'data-shards': alias },
      h('summary', {}, `${n} shard${n === 1 ? '' : 's'} of ${f.pattern}`),
      h('ul', {}, ...f.shards.map((s) => h('li', {}, s))));
  }

  function update(ix, st) {
    const targets = (st && st.engine && st.engine.alias_targets) || [];
    lastIx = { documents: st && st.engine ? st.engine.documents : null };
    head.replaceChildren(h('h2', {}, alias), badge(ix.state));
    const f = ix.in_force;
    const rowsOf = [
      ['Live version', ix.current_version === null ? '–' : `v${ix.current_version}`],
      ['Alias points at', h('span', { 'data-alias-target': alias }, targets.join(', ') || '–')],
      ['Documents', num(st && st.engine ? st.engine.documents : null)],
      ['Building', ix.building_version === null ? '–' : `v${ix.building_version}`],
      ['Tables', f ? num(f.tables) : '–'],
      ...(f && f.shards ? [['Shards', shardList(alias, f)]] : []),
      ['Routed', f ? (f.routed ? 'yes' : 'no: the source no longer fits the mapping') : 'not run yet'],
      ['Deliveries', f && f.stopped ? `stopped: ${f.stopped}` : 'running'],
      ['Versions kept', num(ix.history_retention)],
    ];
    facts.replaceChildren(...rowsOf.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    versions.replaceChildren(versionsTable(ix, targets));
    resetBtn.hidden = ix.building_version === null;
    deleteBtn.disabled = ix.building_version !== null; // (409 while a build runs: cancel it first)
    deleteBtn.title = deleteBtn.disabled ? 'a build is running: cancel it first' : '';
    if (ix.building_version !== null && !stopProgress) {
      if (estimate === null) estimate = lastIx.documents || null;
      followBuild();
    }
  }

  return { el, update, stop: stopFollowing };
}

export function mount(root) {
  const err = errorSlot();
  const list = h('div', { class: 'indices' });
  const meta = h('p', { class: 'muted' });
  root.append(h('h1', {}, 'Indices'), meta, err, list);
  const cards = new Map();

  async function refresh() {
    let ix, st;
    try {
      [ix, st] = await Promise.all([get('/api/v1/indices'), get('/api/v1/status').catch(() => null)]);
      err.show(null);
    } catch (e) { err.show(e); return; }
    meta.textContent = `source ${ix.source}; mapping generation ${ix.mapping_generation ?? '–'}`;
    for (const i of ix.indices) {
      let c = cards.get(i.alias);
      if (!c) {
        c = indexCard(i.alias, () => refresh());
        cards.set(i.alias, c);
        list.append(c.el);
      }
      c.update(i, st && (st.indices || []).find((s) => s.alias === i.alias));
    }
    if (ix.indices.length === 0) list.replaceChildren(h('p', { class: 'muted' }, 'No index config: import a mapping (searchsync mapping import).'));
  }
  const stopList = every(LIST_MS, refresh);
  return () => { stopList(); for (const c of cards.values()) c.stop(); };
}
