// tests/integration/t_ui_sources.mjs — the browser half of t_ui_sources.sh:
// the Databases screen in a real headless Chromium (Debian's chromium through
// playwright-core), as a person uses it: the list, the add form with a wrong
// and then the right password, the source coming up, the edit form. Figures
// are compared with GET /api/v1/sources (Bearer token). Prints `ok: ...` per
// check, throws on the first failure.
//
// Env: UI_URL, TOKEN, SHOTS, PW_DIR, CHROMIUM, PW_W (west's password), PW_BAD
// (a wrong one), WEST_PORT.
import { env, URL_, TOKEN, SHOTS, chromium, ok, sleep, until, apiGet } from './ui_lib.mjs';
import { mkdirSync } from 'node:fs';

const PW_W = env('PW_W'), PW_BAD = env('PW_BAD'), WEST_PORT = env('WEST_PORT');

mkdirSync(SHOTS, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // the 400s of the refused passwords are provoked on purpose
    if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  const shot = async (name, p = page) => { await p.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true }); };
  // nothing typed as a password is left in the page
  const noPassword = async (what) => {
    const html = await page.content();
    const values = await page.locator('input').evaluateAll((els) => els.map((e) => e.value));
    const seen = [PW_W, PW_BAD].filter((p) => html.includes(p) || values.includes(p));
    ok(seen.length === 0, `${what}: no password in the page (its HTML and every input)`, seen.length);
  };

  await page.goto(`${URL_}/login`);
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page.waitForSelector('#nav a[data-screen="databases"]');
  await page.click('#nav a[data-screen="databases"]');
  await page.waitForSelector('#sources-table');

  // ---- the list: east read here, west listed by the index config, unread
  const row = (name) => page.locator(`#sources-table tr[data-source="${name}"]`);
  await until(20, 'east shown as up', async () => (await row('east').locator('[data-role=state]').textContent()).includes('up'));
  ok(true, 'list: east is up');
  const api0 = await apiGet('/api/v1/sources');
  const east = api0.sources.find((s) => s.name === 'east');
  ok((await row('east').locator('[data-role=reader]').textContent()) === east.reader_node, 'list: east\'s reader node as the API says', east.reader_node);
  ok((await row('west').locator('[data-role=state]').textContent()).includes('not read'), 'list: west, listed by the index config, is not read');
  const fed = await row('west').locator('[data-role=index-configs]').textContent();
  ok(fed === east.index_configs.join(', '), 'list: the index config west feeds', fed);
  ok(await row('west').locator('button[data-action=edit]').count() === 0, 'list: a source not added here has no Edit');
  await shot('databases');

  // ---- add west with a wrong password: shown beside the field, emptied
  const form = page.locator('#source-add');
  await form.locator('[name=name]').fill('west');
  await form.locator('[name=host]').fill('127.0.0.1');
  await form.locator('[name=port]').fill(WEST_PORT);
  await form.locator('[name=user]').fill('repl_w');
  await form.locator('[name=password]').fill(PW_BAD);
  await form.locator('button[type=submit]').click();
  const pwErr = form.locator('[data-error-for=password]');
  await pwErr.waitFor({ state: 'visible', timeout: 20000 });
  const pwText = await pwErr.textContent();
  ok(pwText.includes('as repl_w') && pwText.includes('check the user and password given'), 'add: a wrong password is refused beside its field', pwText);
  ok(await form.locator('[name=password]').inputValue() === '', 'add: the password field is emptied');
  ok((await apiGet('/api/v1/sources')).sources.find((s) => s.name === 'west').registered === false, 'add: nothing recorded');
  await noPassword('after the refused add');

  // ---- the right one
  await form.locator('[name=password]').fill(PW_W);
  await form.locator('button[type=submit]').click();
  const done = page.locator('[data-role=source-done][data-source=west]');
  await done.waitFor({ timeout: 30000 });
  const doneText = await done.textContent();
  ok(doneText.includes('west.ini') && doneText.includes('searchsync run --config'), 'add: the result names the file and the command', doneText);
  ok(doneText.includes('password set'), 'add: the password shows as set');
  await noPassword('after the add');
  await until(60, 'west up with a reader and a lag', async () =>
    (await row('west').locator('[data-role=state]').textContent()).includes('up') &&
    (await row('west').locator('[data-role=reader]').textContent()) !== '–' &&
    /\d+ s/.test(await row('west').locator('[data-role=lag]').textContent()));
  const west = (await apiGet('/api/v1/sources')).sources.find((s) => s.name === 'west');
  ok(west.registered && west.host === '127.0.0.1' && String(west.port) === WEST_PORT && west.password === 'set',
    'the API: west registered, its password only "set"', west);
  ok((await row('west').locator('td[data-label=Server]').textContent()) === `127.0.0.1:${WEST_PORT} as repl_w`, 'list: west\'s server');
  ok((await row('west').locator('[data-role=reader]').textContent()) === west.reader_node, 'list: west\'s reader node', west.reader_node);

  // ---- edit: the password only "set"; a wrong one refused beside it
  await row('west').locator('button[data-action=edit]').click();
  const edit = page.locator('#source-edit');
  await edit.waitFor();
  ok(await edit.locator('[name=password]').inputValue() === '', 'edit: the password field is empty');
  ok((await edit.locator('[name=password]').getAttribute('placeholder')).startsWith('set'), 'edit: it says the password is set');
  ok(await edit.locator('[name=host]').inputValue() === '127.0.0.1', 'edit: the host filled in');
  await edit.locator('[name=password]').fill(PW_BAD);
  await edit.locator('button[type=submit]').click();
  const editErr = edit.locator('[data-error-for=password]');
  await editErr.waitFor({ state: 'visible', timeout: 20000 });
  ok((await editErr.textContent()).includes('check the user and password given'), 'edit: a wrong password is refused beside its field');
  await noPassword('after the refused edit');
  // an idle reader's node state is not rewritten: east stays read, by its node
  ok((await row('east').locator('[data-role=state]').textContent()).includes('up') &&
     (await row('east').locator('[data-role=reader]').textContent()) === east.reader_node,
     'list: east, idle since it started, still shown up with its reader');
  ok(await page.locator('#source-add [name=name]').inputValue() === '', 'add: the form is emptied once the source is added');
  await shot('databases-edit');
  ok(problems.length === 0, 'no script error or CSP violation in the console', problems);

  // ---- a phone: no horizontal scroll
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
                                           storageState: await context.storageState() });
  const pp = await phone.newPage();
  await pp.goto(`${URL_}/#databases`);
  await pp.waitForSelector('#sources-table');
  await sleep(1000);
  const w = await pp.evaluate(() => document.documentElement.scrollWidth);
  ok(w <= 390, 'phone: no horizontal scroll on databases', w);
  await shot('databases-phone', pp);
  await phone.close();
} finally {
  await browser.close();
}
