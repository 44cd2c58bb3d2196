// tests/integration/t_cluster_rebalance.mjs — the browser half of
// t_cluster_rebalance.sh: the Nodes screen of a ZooKeeper cluster in a real
// headless Chromium (Debian's chromium through playwright-core): the node
// with its rebalance status as the API says it, then the "Rebalance jobs
// now" button, whose assignment is shown beside it. Prints `ok: ...` per
// check, throws on the first failure.
//
// Env: UI_URL, TOKEN, SHOTS, PW_DIR, CHROMIUM, NODE_ID.
import { env, URL_, TOKEN, SHOTS, chromium, ok, apiGet } from './ui_lib.mjs';
import { mkdirSync } from 'node:fs';

const NODE = env('NODE_ID');
mkdirSync(SHOTS, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${URL_}/login`);
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page.waitForSelector('#nav a[data-screen="nodes"]');
  await page.click('#nav a[data-screen="nodes"]');
  const api = await apiGet('/api/v1/nodes');
  const mine = api.nodes.find((n) => n.node === NODE);
  ok(mine, 'the API lists the node', api);
  const row = page.locator('#screen-nodes tr', { hasText: NODE });
  await row.locator('td', { hasText: `${mine.entity.cloud_status} / ${mine.entity.node_status}` }).waitFor({ timeout: 15000 });
  ok(true, `nodes: ${NODE} with its status as the API says (${mine.entity.cloud_status} / ${mine.entity.node_status})`);
  const btn = page.locator('#screen-nodes button[data-action="rebalance"]');
  await btn.waitFor({ state: 'visible', timeout: 15000 });
  ok(true, 'nodes: a cluster shows the rebalance button');
  await btn.click();
  const out = page.locator('#screen-nodes [data-role="rebalance-result"]');
  await page.waitForFunction(() => /jobs assigned/.test(document.querySelector('#screen-nodes [data-role="rebalance-result"]').textContent), null, { timeout: 60000 });
  const text = await out.textContent();
  ok(text.includes(`${NODE}: none`), 'nodes: the rebalance assignment is shown beside the button', text);
  await page.screenshot({ path: `${SHOTS}/cluster-nodes.png`, fullPage: true });
  ok(problems.length === 0, 'no page errors', problems);
} finally {
  await browser.close();
}
