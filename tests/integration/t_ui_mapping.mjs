// tests/integration/t_ui_mapping.mjs — the browser half of t_ui_mapping.sh:
// drives the Sources, Mapping and Dead letters screens of the admin web UI
// in a real headless Chromium (Debian's chromium through playwright-core).
// Every step is what a person would do; figures are compared with what the
// API (Bearer token) says and the .sh compares the result with SQL and the
// engine. Prints `ok: ...` per check, throws on the first failure.
//
// Env: UI_URL, TOKEN, SEARCH_URL, SHOTS, PW_DIR, CHROMIUM, DLX (the strict
// index of the dead letters), FIRST_PRODUCT (SQL's MIN(shop.products.id)).
import { env, URL_, TOKEN, SHOTS, chromium, counter, ok, sleep, until, apiGet } from './ui_lib.mjs';
import { mkdirSync } from 'node:fs';

const DLX = env('DLX');

mkdirSync(SHOTS, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
const t0 = Date.now();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // the 422 of the refused plan is provoked on purpose
    if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.accept(); });
  const shot = async (name, p = page, fullPage = true) => { await p.screenshot({ path: `${SHOTS}/${name}.png`, fullPage }); };

  await page.goto(`${URL_}/login`);
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page.waitForSelector('#nav a[data-screen="mapping"]');
  const navs = await page.locator('#nav a').allTextContents();
  ok(['Dead letters', 'Sources', 'Mapping'].every((t) => navs.includes(t)), 'the new screens are in the navigation', navs);

  // ---- Sources: tables by database; Auto-generate
  await page.click('#nav a[data-screen="sources"]');
  const shopCard = page.locator('#source-dbs section[data-db="shop"]');
  await shopCard.waitFor();
  const api = await apiGet('/api/v1/source/tables');
  const shopTables = api.tables.filter((t) => t.database === 'shop').map((t) => t.table);
  const shown = await shopCard.locator('td[data-label="Table"] code').allTextContents();
  ok(JSON.stringify(shown) === JSON.stringify(shopTables), 'sources: the shop database with the tables the API lists', { shown, shopTables });
  const notesRow = shopCard.locator('tr', { has: page.locator('code[data-table="shop.product_notes"]') });
  ok((await notesRow.locator('td[data-label="Primary key"]').textContent()) === 'id', 'sources: product_notes with its primary key');
  const noPk = shopCard.locator('tr', { has: page.locator('code[data-table="shop.ui_no_pk"]') });
  ok((await noPk.locator('td[data-label="Primary key"]').textContent()).includes('not usable as a root'), 'sources: a table without a primary key is marked');
  ok(await noPk.locator('button[data-action="generate"]').isDisabled(), 'sources: and not offered for Auto-generate');
  await shopCard.locator('button[data-action="generate"][data-table="shop.products"]').click();
  const gen = page.locator('#gen-result[data-table="shop.products"]');
  await gen.waitFor({ timeout: 20000 });
  const genCols = await gen.locator('.generated > .table-wrap td[data-label="Column"]').allTextContents();
  ok(genCols.includes('id') && genCols.includes('price') && genCols.includes('brand_id'), 'sources: the generated columns', genCols);
  const keyCol = await gen.locator('.generated > .table-wrap tr', { has: page.locator('.badge', { hasText: 'key' }) }).locator('td[data-label="Column"]').allTextContents();
  ok(JSON.stringify(keyCol) === '["id"]', 'sources: the key column marked', keyCol);
  const priceType = await gen.locator('.generated > .table-wrap tr', { has: page.locator('code', { hasText: /^price$/ }) }).locator('td[data-label="Engine type"]').textContent();
  ok(priceType === 'scaled_float', 'sources: DECIMAL(12,2) -> scaled_float', priceType);
  const kinds = await gen.locator('li.relation > .relation-head').allTextContents();
  ok(kinds.some((k) => k.startsWith('brand') && k.includes('object')), 'sources: brand as an object', kinds);
  ok(kinds.some((k) => k.includes('nested array')), 'sources: a nested array (skus, reviews)', kinds);
  ok(kinds.some((k) => k.includes('many-to-many, flattened')), 'sources: the tags flattened through product_tags', kinds);
  const guesses = await gen.locator('ul.guesses li').allTextContents();
  ok(guesses.some((g) => g.includes('shop.products.brand_id -> shop.brands.id')), 'sources: the guesses (the demo has no foreign keys)', guesses);
  const sample = JSON.parse(await gen.locator('pre.sample').textContent());
  ok(String(sample.id) === env('FIRST_PRODUCT'), 'sources: the sample document is the first product', sample.id);
  await shot('sources');

  // product_notes without relations, handed to the Mapping screen
  await page.selectOption('#gen-depth', '0');
  await shopCard.locator('button[data-action="generate"][data-table="shop.product_notes"]').click();
  await page.locator('#gen-result[data-table="shop.product_notes"]').waitFor({ timeout: 20000 });
  await page.click('#gen-add');

  // ---- Mapping: the stored file per index config
  await page.waitForSelector('#screen-mapping');
  await page.locator('section.mapping-index[data-alias="products"]').waitFor();
  const stored = await apiGet('/api/v1/mapping');
  const aliases = await page.locator('section.mapping-index h2').allTextContents();
  ok(JSON.stringify(aliases) === JSON.stringify(stored.indices.map((i) => i.alias)), 'mapping: the stored index configs', aliases);
  const prod = page.locator('section.mapping-index[data-alias="products"] .table-config[data-table="shop.products"]');
  const skus = prod.locator('li.relation[data-relation="skus"]').first();
  ok((await skus.locator('.relation-head').first().textContent()).includes('nested array') &&
     (await skus.locator('.relation-join').first().textContent()).includes('id → shop.skus.product_id'), 'mapping: skus nested, joined id -> product_id');
  ok(await skus.locator('li.relation[data-relation="warehouse"]').count() === 1, 'mapping: the warehouse inside skus (a tree)');
  // exact numbers: the page's own parser keeps what JSON.parse would round
  const exact = await page.evaluate(async () => {
    const m = await import('/ui/mapping_view.js');
    return m.toText(m.parseExact('{"a":12345678901234567890,"b":1.50,"c":[3]}').value).replace(/\s+/g, '');
  });
  ok(exact === '{"a":12345678901234567890,"b":1.50,"c":[3]}', 'mapping: numbers are written back as they were read', exact);

  // add shop.product_notes, auto-generated without relations
  await page.locator('#add-preview .generated').waitFor({ timeout: 20000 });
  ok(await page.inputValue('#add-table') === 'shop.product_notes' && await page.inputValue('#add-depth') === '0',
     'mapping: the table handed over by Sources, generated at its depth');
  ok(await page.inputValue('#add-alias') === 'product_notes', 'mapping: the alias proposed is the table name');
  // the preview says what the fields hold: the alias and the replicas typed
  const previewOf = (f) => page.textContent(`#add-preview [data-field="${f}"]`);
  ok(await page.inputValue('#add-replicas') === '0' && (await previewOf('replicas')) === '0 replica(s)',
     'mapping: replicas proposed for the one-node engine: 0, in the field and the preview', await previewOf('replicas'));
  await page.fill('#add-alias', 'product_notes_x');
  await page.fill('#add-replicas', '2');
  await until(5, 'the preview following the fields', async () =>
    (await previewOf('alias')) === 'product_notes_x' && (await previewOf('replicas')) === '2 replica(s)');
  ok(true, 'mapping: the preview shows the alias and the replicas typed');
  await page.fill('#add-replicas', '-1');
  await until(5, 'a bad replicas value refused next to the form', async () =>
    (await page.isVisible('#add-error')) && (await page.textContent('#add-error')).includes('replicas'));
  ok(true, 'mapping: a negative replicas value refused, naming the field');
  await page.fill('#add-alias', 'product_notes');
  await page.fill('#add-replicas', '0');
  await until(5, 'the preview back to product_notes', async () => (await previewOf('alias')) === 'product_notes');
  const pcols = await page.locator('#add-preview .generated > .table-wrap td[data-label="Column"]').allTextContents();
  ok(JSON.stringify(pcols) === '["id","product_id","note","created_at"]', 'mapping: the generated columns of product_notes', pcols);
  await page.click('#add-index');
  const notes = page.locator('section.mapping-index[data-alias="product_notes"]');
  await notes.waitFor();
  ok(await page.getAttribute('#mapping-state', 'data-edited') === 'yes', 'mapping: edited, not stored');

  // f.inside: the extend name of the relation to add it inside (else to the table)
  const addRelation = async (f) => {
    const owner = f.inside ? notes.locator(`li.relation[data-relation="${f.inside}"]`) : notes;
    const form = f.inside ? owner.locator('form.relation-form').last()
      : notes.locator('form.relation-form[data-table="shop.product_notes"][data-path=""]');
    const summary = f.inside ? owner.locator('details.add-relation.inner > summary').last()
      : notes.locator('details.add-relation:not(.inner) > summary');
    if (!(await form.isVisible())) await summary.click();
    await form.locator('input[id$="-column"]').fill(f.column);
    await form.locator('select[id$="-table"]').selectOption(f.table);
    await form.locator('input[id$="-join"]').fill(f.join);
    await form.locator('input[id$="-extend"]').fill(f.extend);
    if (f.nested) await form.locator('input[id$="-nested"]').check();
    if (f.flatten) await form.locator('input[id$="-flatten"]').check();
    await form.locator('button[type=submit]').click();
    await notes.locator(`li.relation[data-relation="${f.extend}"]`).waitFor({ timeout: 15000 });
  };
  // a wrong join column first: the plan refuses it, naming it
  await addRelation({ column: 'id', table: 'shop.note_replies', join: 'no_such_col', extend: 'wrong', nested: true });
  await page.click('#mapping-plan');
  await until(20, 'the problems next to the editor', async () => (await page.locator('#plan-problems li').count()) > 0);
  const probs = await page.locator('#plan-problems li').allTextContents();
  ok(probs.some((p) => p.includes('no_such_col')), 'mapping: Validate & plan shows the problem naming the column', probs);
  ok(await page.isDisabled('#mapping-apply'), 'mapping: Apply stays disabled after a refused plan');
  await shot('mapping-problems');
  await notes.locator('li.relation[data-relation="wrong"] button[data-action="remove-relation"]').click();
  await until(10, 'the wrong relation removed', async () => (await notes.locator('li.relation[data-relation="wrong"]').count()) === 0);
  ok(true, 'mapping: a relation removed');

  await addRelation({ column: 'product_id', table: 'shop.products', join: 'id', extend: 'product' });
  await addRelation({ column: 'id', table: 'shop.note_replies', join: 'note_id', extend: 'replies', nested: true });
  await addRelation({ column: 'id', table: 'shop.note_tags', join: 'note_id', extend: 'tags', flatten: true });
  const rels = await notes.locator('.table-config > ul.tree > li.relation > .relation-head').allTextContents();
  ok(rels.length === 3 && rels[0].includes('object') && rels[1].includes('nested array') && rels[2].includes('many-to-many, flattened'),
     'mapping: product (object), replies (nested), tags (flattened) added', rels);
  // a relation inside a relation: the product's brand
  await addRelation({ inside: 'product', column: 'brand_id', table: 'shop.brands', join: 'id', extend: 'brand' });
  ok(await notes.locator('li.relation[data-relation="product"] li.relation[data-relation="brand"][data-table="shop.brands"]').count() === 1,
     'mapping: the brand added inside the product relation');
  ok(await notes.locator('li.relation[data-relation="tags"] li.relation[data-table="shop.tags"]').count() === 1,
     'mapping: the flattened tags go through note_tags to shop.tags');

  // the raw JSON: the new index config with the replicas of the form (0 on
  // this one-node engine), edited there as a fallback (versions kept)
  await page.click('#raw-box > summary');
  const rawText = await page.inputValue('#mapping-raw');
  ok(/"alias": "product_notes",\s*"shards": 1,\s*"replicas": 0,/.test(rawText), 'mapping: the raw JSON holds the new index config with the replicas of the form');
  const edited = rawText.replace(/("alias": "product_notes",\s*"shards": 1,\s*"replicas": 0,\s*"history_retention": )2/, '$13');
  ok(edited !== rawText, 'mapping: the raw JSON edited');
  await page.fill('#mapping-raw', edited);
  await page.locator('#mapping-raw').blur();

  await page.click('#mapping-plan');
  await until(20, 'the plan', async () => (await page.locator('#plan-out .plan').count()) > 0);
  const plan = await page.locator('#plan-out pre.plan-lines').textContent();
  ok(/\+ index product_notes/.test(plan), 'mapping: the plan adds the index config', plan);
  ok(!/~ index products/.test(plan), 'mapping: and leaves the others alone', plan);
  ok(await page.isEnabled('#mapping-apply'), 'mapping: Apply enabled after a plan with changes');
  await shot('mapping-plan');
  await page.click('#mapping-apply');
  await until(20, 'applied', async () => (await page.getAttribute('#plan-out .plan', 'data-applied')) === 'yes');
  ok(true, 'mapping: applied');
  ok(await page.getAttribute('#mapping-state', 'data-edited') === 'no', 'mapping: the screen shows the stored mapping again');
  ok(await page.isDisabled('#mapping-apply'), 'mapping: Apply disabled again');
  const after = await apiGet('/api/v1/mapping');
  const pn = after.indices.find((i) => i.alias === 'product_notes');
  ok(pn && pn.replicas === 0 && pn.tables[0].relations.map((r) => r.extend_name).join() === 'product,replies,tags',
     'mapping: the API has the new index config with its relations and the raw edit', pn);
  await page.click('#mapping-plan');
  await until(20, 'the plan again', async () => (await page.getAttribute('#plan-out .plan', 'data-changes')) === '0');
  ok(true, 'mapping: planned again, nothing to change');
  await page.locator('section.mapping-index[data-alias="product_notes"]').scrollIntoViewIfNeeded();
  await shot('mapping');

  // ---- Dead letters
  await page.click('#nav a[data-screen="deadletters"]');
  await page.fill('#dl-index', DLX);
  await page.locator('#dl-index').press('Enter');
  await page.locator('#dl-index').blur();
  await until(10, 'the three dead letters', async () => (await page.locator('#dl-list article.dl').count()) === 3);
  const docIds = await page.locator('#dl-list article.dl').evaluateAll((a) => a.map((x) => x.dataset.docId));
  ok(JSON.stringify(docIds) === '["ok2","bad1","ok1"]', 'dead letters: the index\'s, newest first', docIds);
  const bad = page.locator('#dl-list article.dl[data-doc-id="bad1"]');
  const badErr = await bad.locator('.dl-error').textContent();
  ok(badErr === 'strict_dynamic_mapping_exception: mapping set to strict, dynamic introduction of [b] within [_doc] is not allowed',
     'dead letters: the engine\'s error readable', badErr);
  await bad.locator('button[data-action="open"]').click();
  await page.locator('#dl-open').waitFor();
  ok(JSON.parse(await page.textContent('#dl-body')).b === 1, 'dead letters: opened, with its body');
  await shot('deadletters');
  await page.locator('#dl-list article.dl[data-doc-id="ok2"] button[data-action="replay"]').click();
  const resultHas = (want) => async () => {
    const t = await page.textContent('#dl-result');
    if (t.includes(want)) return true;
    throw new Error(`result "${t}", errors: ${(await page.locator('#screen-deadletters p.error:visible').allTextContents()).join(' | ')}`);
  };
  await until(20, 'one replayed', resultHas('(ok2): replayed 1, the engine took it; 3 left in the source'));
  ok(await page.locator('#dl-list article.dl').count() === 2, 'dead letters: one replayed alone: "replayed 1, the engine took it"');
  await page.click('#dl-replay-index');
  await until(30, 'the index replayed', resultHas('replayed 2, 1 left'));
  ok(true, 'dead letters: the index\'s replayed: "replayed 2, 1 left"');
  const left = await page.locator('#dl-list article.dl').evaluateAll((a) => a.map((x) => x.dataset.docId));
  ok(JSON.stringify(left) === '["bad1"]', 'dead letters: the refused one is waiting again', left);
  const again = await page.locator('#dl-list article.dl[data-doc-id="bad1"] .dl-error').textContent();
  ok(/strict_dynamic_mapping_exception/.test(again) && !again.trim().startsWith('{'), 'dead letters: with the engine\'s new error, readable', again);
  await page.locator('#dl-list article.dl[data-doc-id="bad1"] button[data-action="discard"]').click();
  await until(10, 'discarded', async () => (await page.locator('#dl-list article.dl').count()) === 0);
  ok(dialogs.some((d) => d.startsWith('Discard dead letter')), 'dead letters: discarded after a confirmation', dialogs);
  const rest = await apiGet(`/api/v1/dead-letters?index=${encodeURIComponent(DLX)}`);
  ok(rest.total === 0, 'dead letters: the API has none left for the index', rest);
  // every index: the other one, its error with its cause
  await page.fill('#dl-index', '');
  await page.locator('#dl-index').blur();
  const late = page.locator('#dl-list article.dl[data-doc-id="late1"]');
  await late.waitFor();
  const lateErr = await late.locator('.dl-error').textContent();
  ok(lateErr === 'mapper_parsing_exception: failed to parse field [a] of type [long]; caused by illegal_argument_exception: For input string: x',
     'dead letters: an error with its cause, readable', lateErr);

  // ---- the Source filter: this daemon's source (shop) by default, another
  // source's (west: two dead letters of the same metadata schema), every source's
  const cards = () => page.locator('#dl-list article.dl').evaluateAll((a) => a.map((x) =>
    `${x.dataset.docId}:${x.dataset.source}:${x.querySelector('.dl-source').textContent}:` +
    `${x.querySelector('[data-action="replay"]').disabled ? 'off' : 'on'}`));
  let seen = await cards();
  ok(JSON.stringify(seen) === '["late1:shop:source shop:on"]', 'dead letters by source: this daemon\'s by default, each naming its source', seen);
  const opts = await page.locator('#dl-source option').evaluateAll((o) => o.map((x) => `${x.value}=${x.textContent}`));
  ok(JSON.stringify(opts) === '["shop=shop (this daemon’s) · 1","west=west · 2","*=every source · 3"]',
     'dead letters by source: the filter offers each source with its count, and every source', opts);
  await page.selectOption('#dl-source', 'west');
  await until(10, 'west\'s two', async () => JSON.stringify(await cards()) === '["w2:west:source west:off","w1:west:source west:off"]');
  ok(true, 'dead letters by source: west\'s only, newest first, their Replay off');
  ok(await page.locator('#dl-list article.dl[data-doc-id="w1"] button[data-action="discard"]').isDisabled(), 'dead letters by source: another source\'s Discard off');
  await page.locator('#dl-list article.dl[data-doc-id="w1"] button[data-action="open"]').click();
  await until(10, 'w1 opened', async () => (await page.getAttribute('#dl-open', 'data-id')) !== null &&
    JSON.parse(await page.textContent('#dl-body')).b === 2);
  const facts = await page.locator('#dl-open dl.facts').textContent();
  ok(facts.startsWith('Sourcewest'), 'dead letters by source: another source\'s opened, to look at, naming its source', facts);
  ok(await page.locator('#dl-replay-all').isDisabled(), 'dead letters by source: Replay all off on another source\'s list');
  const other = await page.textContent('#dl-other');
  ok(await page.locator('#dl-other').isVisible() && other.includes('replayed by the daemon of source west') && other.includes('this one reads shop'),
     'dead letters by source: it says which daemon replays them', other);
  const westApi = await apiGet('/api/v1/dead-letters?source=west');
  ok(westApi.total === 2 && (await page.textContent('#dl-total')) === '2 waiting.', 'dead letters by source: the count as the API gives it', westApi.total);
  await shot('deadletters-source');
  await page.selectOption('#dl-source', '*');
  await until(10, 'every source\'s three', async () =>
    JSON.stringify(await cards()) === '["w2:west:source west:off","w1:west:source west:off","late1:shop:source shop:on"]');
  ok(true, 'dead letters by source: every source\'s, newest first, only this daemon\'s replayable');
  ok(!(await page.locator('#dl-replay-all').isDisabled()) && (await page.locator('#dl-other').isHidden()),
     'dead letters by source: Replay all on again (this daemon\'s) on every source\'s list');

  // ---- a phone: readable, no horizontal scroll
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
                                           storageState: await context.storageState() });
  const pp = await phone.newPage();
  pp.on('pageerror', (e) => problems.push(`phone page error: ${e.message}`));
  await pp.goto(`${URL_}/`);
  for (const [name, ready] of [['sources', '#source-dbs section'], ['mapping', 'section.mapping-index'], ['deadletters', '#dl-total']]) {
    await pp.goto(`${URL_}/#${name}`);
    await pp.waitForSelector(`#screen-${name} ${ready}`, { timeout: 20000 });
    if (name === 'mapping') {
      await pp.locator('section.mapping-index[data-alias="product_notes"] details.add-relation:not(.inner) > summary').click();
      await pp.click('#raw-box > summary');
    }
    if (name === 'sources') {
      await pp.locator('button[data-action="generate"][data-table="shop.product_notes"]').click();
      await pp.locator('#gen-result').waitFor({ timeout: 20000 });
    }
    await sleep(500);
    const w = await pp.evaluate(() => document.documentElement.scrollWidth);
    ok(w <= 390, `phone: no horizontal scroll on ${name}`, w);
    if (name === 'mapping') {
      // one screen's worth: the new index config's relations and the form
      await pp.locator('section.mapping-index[data-alias="product_notes"] h4').scrollIntoViewIfNeeded();
      await pp.evaluate(() => window.scrollBy(0, -120));
      await shot(`${name}-phone`, pp, false);
    } else {
      await shot(`${name}-phone`, pp);
    }
  }
  await phone.close();

  // Replay all (after a confirmation)
  await page.click('#dl-replay-all');
  await until(30, 'every dead letter replayed', resultHas('every dead letter of source shop: replayed 1, 0 left'));
  ok(dialogs.some((d) => d.startsWith('Replay every dead letter of source shop?')), 'dead letters: Replay all after a confirmation: "replayed 1, 0 left"', dialogs);
  await until(10, 'west\'s left', async () => JSON.stringify(await cards()) === '["w2:west:source west:off","w1:west:source west:off"]');
  ok(true, 'dead letters: this source\'s none left; west\'s stay, for west\'s daemon');
  await page.selectOption('#dl-source', 'shop');
  await until(10, 'the list empty', async () => (await page.textContent('#dl-total')) === 'No dead letter.');
  ok(true, 'dead letters: none left of this source');

  ok(problems.length === 0, 'no script error or CSP violation in the console', problems);
  console.log(`browser checks: ${counter.checks} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
} finally {
  await browser.close();
}
