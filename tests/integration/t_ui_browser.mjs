// tests/integration/t_ui_browser.mjs — the browser half of t_ui_browser.sh:
// drives the admin web UI (web/ui/) in a real headless Chromium (Debian's
// chromium, through playwright-core installed by the .sh into the cache).
// Every step is what a person would do: log in through the form, read the
// overview, reindex from the indices screen, add/edit/publish a word, log
// out. Figures are compared with what the API (Bearer token) and the
// engine say. Writes screenshots to $SHOTS and prints `ok: ...` per check;
// any failure throws (exit 1) with what was expected and seen.
//
// Env: UI_URL, TOKEN, SEARCH_URL, SHOTS, PW_DIR (where playwright-core is
// installed), CHROMIUM, TOUCH_CMD (a shell command that makes 50 changes
// in the source), WORD_OLD, WORD_NEW.
import { env, URL_, TOKEN, SHOTS, chromium, counter, ok, sleep, until, apiGet } from './ui_lib.mjs';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

const SEARCH = env('SEARCH_URL');
const engine = (path) => JSON.parse(execFileSync('curl', ['-s', SEARCH + path], { encoding: 'utf8' }));

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
  let loggedOut = false;
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // an HTTP error status is logged by Chromium as "Failed to load resource":
    // the refused login and the 409s are provoked on purpose; anything else
    // (a script error, a CSP violation) is a problem
    if (m.type() === 'error' && !loggedOut && !/^Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  const shot = async (name, p = page) => { await p.screenshot({ path: `${SHOTS}/${name}.png` }); };
  const stat = (key) => page.locator(`.stat[data-stat="${key}"] .value`).textContent();
  const statNote = (key) => page.locator(`.stat[data-stat="${key}"] .note`).textContent();

  // ---- login through the form
  const first = await page.goto(`${URL_}/`);
  ok(new URL(page.url()).pathname === '/login', 'GET / without a session lands on /login', page.url());
  ok(first.status() === 200, 'the login form answers 200', first.status());
  await page.fill('#token', 'not-the-token');
  await page.click('button[type=submit]');
  await until(10, 'the refused login', async () => (await page.textContent('#error')).includes('not valid'));
  ok(true, 'a wrong token is refused on the form');
  await shot('login');
  await page.fill('#token', TOKEN);
  const [doc] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/' && r.request().resourceType() === 'document'),
    page.click('button[type=submit]'),
  ]);
  const csp = doc.headers()['content-security-policy'] || '';
  ok(csp.includes("script-src 'self'") && !csp.includes('unsafe-inline'), 'the UI page has a CSP without inline scripts', csp);
  ok(/private, no-cache/.test(doc.headers()['cache-control'] || '') && !!doc.headers()['etag'], 'the UI page is revalidated by ETag', doc.headers());
  await page.waitForSelector('#nav a[data-screen="indices"]');
  ok(new URL(page.url()).pathname === '/', 'after the login the UI is shown', page.url());
  const navs = await page.locator('#nav a').allTextContents();
  ok(['Overview', 'Indices', 'Nodes', 'Checks', 'Delayed runs', 'Dynamic words'].every((t) => navs.includes(t)), 'every screen is in the navigation', navs);
  ok(!navs.includes('Topics'), 'a binlog source has no Topics screen (GET /api/v1/topics: 409)', navs);

  // ---- overview: live figures, as the API has them, moving with changes
  await page.waitForSelector('#screen-overview');
  await until(20, 'the engine shown up and the reader at the end', async () =>
    (await stat('engine')) === 'up' && /at the end|reading/.test(await stat('reader')));
  ok(true, 'overview: engine up, reader reading');
  const live0 = await apiGet('/api/v1/live');
  await until(20, 'overview queue and in-flight figures', async () =>
    /^\d[\d,]*$/.test(await stat('queued')) && /^\d[\d,]*$/.test(await stat('inflight')));
  ok(true, 'overview: queued and in-flight are numbers');
  await until(20, 'the acknowledged count of the API on the overview', async () => {
    const n = Number((await statNote('throughput')).replace(/[^\d]/g, ''));
    return n >= live0.acknowledged;
  });
  const ack0 = Number((await statNote('throughput')).replace(/[^\d]/g, ''));
  execFileSync('bash', ['-c', env('TOUCH_CMD')]);
  await until(30, '50 more changes acknowledged on the overview', async () => {
    const n = Number((await statNote('throughput')).replace(/[^\d]/g, ''));
    return n >= ack0 + 50 ? n : false;
  });
  const live1 = await apiGet('/api/v1/live');
  ok(live1.acknowledged >= ack0 + 50, 'overview: the 50 changes counted as the API counts them', { ack0, api: live1.acknowledged });
  await until(20, 'a throughput above 0 on the chart', async () => {
    const legend = await page.locator('.legend li').first().textContent();
    const max = Number((legend.match(/max ([\d.,]+)/) || [0, '0'])[1].replace(/,/g, ''));
    return max > 0;
  });
  ok(true, 'overview: the chart shows the burst of changes');
  const st = await apiGet('/api/v1/status');
  const dl = (st.dead_letters || []).reduce((a, d) => a + d.count, 0);
  ok(Number((await stat('dead_letters')).replace(/,/g, '')) === dl, 'overview: dead letters as the API counts them', dl);
  ok((await stat('fuses')) === '0', 'overview: no fuse blown');
  await until(20, 'the lag figure', async () => (await stat('lag')) !== '–');
  await page.locator('#overview-indices td', { hasText: 'products_v1' }).first().waitFor();
  ok(true, 'overview: the indices with their alias targets');
  await sleep(3500); // one more point on the chart for the screenshot
  await shot('overview');

  // ---- indices: an index config over shard tables, its pattern and shards
  await page.click('#nav a[data-screen="indices"]');
  const shards = page.locator('details[data-shards="parcels"]');
  await shards.waitFor();
  const db = process.env.SHARDS_DB;
  ok((await shards.locator('summary').textContent()) === `3 shards of ${db}.parcels_{n:[0-9]+}`,
     'indices: an index config over shard tables says its pattern and how many shards',
     await shards.locator('summary').textContent());
  const listed = (await shards.locator('li').allTextContents()).sort();
  ok(JSON.stringify(listed) === JSON.stringify([0, 1, 2].map((n) => `${db}.parcels_${n}`)),
     'indices: ... and lists them', listed);

  // ---- indices: reindex products, follow the progress bar to the switch
  const card = page.locator('section.index[data-alias="products"]');
  await card.waitFor();
  await until(20, 'products live on v1', async () => (await card.locator('[data-alias-target="products"]').textContent()) === 'products_v1');
  ok(true, 'indices: the alias points at products_v1');
  await card.locator('input[type=number]').fill('1');
  await card.locator('button[data-action="reindex"]').click();
  const bar = page.locator('#progress-products');
  await until(20, 'the build followed', async () => (await bar.getAttribute('data-state')) === 'building');
  // a second click while it builds: the API's 409 next to the button
  await card.locator('button[data-action="reindex"]').click();
  const err = card.locator('p.error[data-for="products"]');
  await until(10, 'the 409 next to the button', async () => (await err.isVisible()) && (await err.textContent()).includes('already being rebuilt'));
  ok(true, 'indices: a second reindex shows the API error next to its button');
  const seen = new Set();
  let shotTaken = false;
  await until(240, 'the progress bar at 100%', async () => {
    const v = await bar.evaluate((b) => (b.hasAttribute('value') ? b.value : null));
    const state = await bar.getAttribute('data-state');
    if (v !== null) seen.add(v);
    if (!shotTaken && state === 'building' && v > 0 && v < 100) { await shot('indices'); shotTaken = true; }
    return state === 'done' && v === 100;
  });
  const mid = [...seen].filter((v) => v > 0 && v < 100);
  ok(mid.length > 0, 'indices: the progress bar moved through values between 0 and 100', [...seen]);
  ok((await page.textContent('[data-progress-text="products"]')).includes('now points at v2'), 'indices: the progress text says the alias moved');
  await until(20, 'the card showing products_v2', async () => (await card.locator('[data-alias-target="products"]').textContent()) === 'products_v2');
  const aliases = Object.keys(engine('/_alias/products'));
  ok(aliases.length === 1 && aliases[0] === 'products_v2', 'the engine: alias products -> products_v2', aliases);
  if (!shotTaken) await shot('indices');
  await shot('indices-done');

  // delete-all of brands: enabled only once its alias is typed again
  const bcard = page.locator('section.index[data-alias="brands"]');
  await bcard.locator('button[data-action="delete-all"]').click();
  const delForm = bcard.locator('form.delete-all');
  await delForm.waitFor();
  const delGo = delForm.locator('button[type=submit]');
  await delForm.locator('input').fill('brand');
  ok(await delGo.isDisabled(), 'indices: delete-all stays disabled until the alias is typed exactly');
  await delForm.locator('input').fill('brands');
  ok(await delGo.isEnabled(), 'indices: the alias typed again enables it');
  await delGo.click();
  await until(20, 'brands deleted, shown on its card', async () =>
    (await bcard.locator('[data-delete-result="brands"]').textContent()).includes('unavailable'));
  const brandsLeft = engine('/_cat/indices/brands_v*?format=json&expand_wildcards=all');
  ok(Array.isArray(brandsLeft) && brandsLeft.length === 0, 'the engine: no brands index left', brandsLeft);
  const brandsApi = (await apiGet('/api/v1/indices')).indices.find((i) => i.alias === 'brands');
  ok(brandsApi.state === 'unavailable', 'indices: the API has brands unavailable', brandsApi.state);

  // ---- the other read-only screens
  for (const [name, sel] of [['nodes', '#screen-nodes table'], ['checks', '#screen-checks table'], ['delayed', '#screen-delayed table']]) {
    await page.click(`#nav a[data-screen="${name}"]`);
    await page.waitForSelector(sel, { timeout: 20000 });
    await sleep(300);
    await shot(name);
  }
  const nodes = await apiGet('/api/v1/nodes');
  await page.click('#nav a[data-screen="nodes"]');
  await page.locator('#screen-nodes td', { hasText: nodes.nodes[0].node }).first().waitFor();
  ok(true, 'nodes: the node the API lists');
  ok(await page.locator('#screen-nodes button[data-action="rebalance"]').isHidden(),
    'nodes: no rebalance button on a standalone daemon (nothing to rebalance)');
  const checksApi = await apiGet('/api/v1/checks');
  await page.click('#nav a[data-screen="checks"]');
  await page.locator('#screen-checks td', { hasText: checksApi.checks[0].index }).first().waitFor();
  ok(checksApi.checks.length > 0, 'checks: the check the API lists is shown');
  const runs = await apiGet('/api/v1/delayed/runs');
  await page.click('#nav a[data-screen="delayed"]');
  await page.locator('#screen-delayed td[data-label="Id"]', { hasText: String(runs.runs[0].id) }).first().waitFor();
  ok(runs.runs.length > 0, 'delayed: the run the API lists is shown');
  const tops = await apiGet('/api/v1/delayed/relation-tops');
  ok(tops.levels.length > 0 && tops.levels.every((l) => l.sql.includes('?')), 'delayed: the API lists relation tops with their level SQL', tops.levels);
  await page.locator('#delayed-tops td', { hasText: `${tops.levels[0].db}.${tops.levels[0].table}` }).first().waitFor({ timeout: 20000 });
  ok(true, 'delayed: the relation tops are shown');

  // ---- history: the build just watched, and the sync log's entries
  await page.click('#nav a[data-screen="history"]');
  const built = page.locator('#history-builds tr', { hasText: 'products' }).filter({ hasText: 'done' });
  await built.first().waitFor({ timeout: 20000 });
  const runsApi = await apiGet('/api/v1/indices/products/runs');
  const v2 = runsApi.runs.find((r) => r.version === 2);
  ok(v2 && v2.status === 'done', 'history: the API has version 2 done', runsApi.runs);
  const v2row = await page.locator('#history-builds tr', { hasText: 'products' }).filter({ hasText: 'done' }).allTextContents();
  ok(v2row.some((t) => t.includes(v2.docs_written.toLocaleString('en-US'))), 'history: the build with its documents written', v2row);
  const logApi = await apiGet('/api/v1/sync-log?limit=200');
  await page.locator('#history-log td', { hasText: logApi.entries[0].event }).first().waitFor({ timeout: 20000 });
  ok(logApi.entries.length > 0, 'history: the sync log the API lists is shown');
  await shot('history');

  // ---- dynamic words: add, refuse a duplicate, edit, publish, fetch the file
  const OLD = env('WORD_OLD'), NEW = env('WORD_NEW');
  await page.click('#nav a[data-screen="words"]');
  await page.waitForSelector('#word-add');
  await page.fill('#word-new', OLD);
  await page.selectOption('#word-kind', 'ext');
  await page.click('#word-add button[type=submit]');
  const row = page.locator('#words tr[data-word-id]', { hasText: OLD });
  await row.waitFor();
  ok((await row.getAttribute('data-status')) === 'init', 'words: the new word is init');
  await page.fill('#word-new', OLD);
  await page.click('#word-add button[type=submit]');
  await until(10, 'the duplicate refused next to the form', async () => (await page.isVisible('#word-add-error')) && (await page.textContent('#word-add-error')).length > 0);
  ok(true, 'words: a duplicate shows the API error next to the form');
  await page.fill('#word-new', '');
  const id = await row.getAttribute('data-word-id');
  await row.locator('button[data-action="edit"]').click();
  const editRow = page.locator(`#words tr[data-word-id="${id}"]`);
  await editRow.locator('input.word-edit').fill(NEW);
  await editRow.locator('button[data-action="save"]').click();
  await page.locator(`#words tr[data-word-id="${id}"] td.word`, { hasText: NEW }).waitFor();
  ok(true, 'words: edited before publishing');
  await page.locator(`#words tr[data-word-id="${id}"] button[data-action="publish"]`).click();
  await until(10, 'the word published', async () => (await page.locator(`#words tr[data-word-id="${id}"]`).getAttribute('data-status')) === 'published');
  ok(true, 'words: published');
  const dict = await page.evaluate(async () => (await fetch('/dict/ext.txt')).text());
  ok(dict.split('\n').includes(NEW) && !dict.split('\n').includes(OLD), 'words: /dict/ext.txt holds the new spelling only', dict);
  await shot('words');

  // ---- the overview again (its chart kept the last minutes): another
  // burst of changes, for the screenshot
  await page.click('#nav a[data-screen="overview"]');
  await page.waitForSelector('#screen-overview .legend li');
  const ack1 = Number((await statNote('throughput')).replace(/[^\d]/g, ''));
  execFileSync('bash', ['-c', env('TOUCH_CMD')]);
  await until(30, 'the second burst on the overview', async () =>
    Number((await statNote('throughput')).replace(/[^\d]/g, '')) >= ack1 + 50);
  ok(true, 'overview: shown again, it counts the next 50 changes');
  await sleep(6500);
  await shot('overview');

  // ---- a phone: readable, no horizontal scroll
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
                                           storageState: await context.storageState() });
  const pp = await phone.newPage();
  await pp.goto(`${URL_}/`);
  for (const name of ['overview', 'indices', 'nodes', 'checks', 'delayed', 'words', 'history']) {
    await pp.goto(`${URL_}/#${name}`);
    await pp.waitForSelector(`#screen-${name}`);
    await sleep(1500);
    const w = await pp.evaluate(() => document.documentElement.scrollWidth);
    ok(w <= 390, `phone: no horizontal scroll on ${name}`, w);
    if (name === 'overview' || name === 'indices') await shot(`${name}-phone`, pp);
  }
  await phone.close();

  ok(problems.length === 0, 'no script error or CSP violation in the console', problems);

  // ---- log out: the UI goes to /login, the API refuses the old session
  const cookies = await context.cookies();
  const sid = (cookies.find((c) => c.name === 'ss_session') || {}).value;
  ok(!!sid && cookies.find((c) => c.name === 'ss_session').httpOnly, 'the session cookie is HttpOnly');
  loggedOut = true;
  await page.click('#logout');
  await page.waitForURL((u) => u.pathname === '/login');
  ok(true, 'logout: the UI goes back to /login');
  const after = await page.evaluate(async () => (await fetch('/api/v1/status')).status);
  ok(after === 401, 'logout: the API answers 401 to the browser', after);
  const old = await fetch(`${URL_}/api/v1/status`, { headers: { Cookie: `ss_session=${sid}` } });
  ok(old.status === 401, 'logout: the old session cookie is refused too', old.status);
  await page.goto(`${URL_}/#indices`);
  ok(new URL(page.url()).pathname === '/login', 'logout: the UI sends the browser to /login again', page.url());
  console.log(`browser checks: ${counter.checks} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
} finally {
  await browser.close();
}
