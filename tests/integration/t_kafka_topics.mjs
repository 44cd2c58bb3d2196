// tests/integration/t_kafka_topics.mjs — the browser half of t_kafka_sync.sh:
// the Topics screen of a Kafka source in a real headless Chromium (Debian's
// chromium through playwright-core): the configuration's topic with its
// saved offsets and lag as the API says them, a bad name refused with the
// API's message, a topic added with the form (the daemon subscribes to it)
// and removed with its button. Prints `ok: ...` per check, throws on the
// first failure.
//
// Env: UI_URL, TOKEN, SHOTS, PW_DIR, CHROMIUM.
import { SHOTS, URL_, TOKEN, chromium, ok, until, apiGet } from './ui_lib.mjs';
import { mkdirSync } from 'node:fs';

mkdirSync(SHOTS, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
const topicOf = async (name) => (await apiGet('/api/v1/topics')).topics.find((t) => t.topic === name);
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${URL_}/login`);
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page.waitForSelector('#nav a[data-screen="topics"]');
  await page.click('#nav a[data-screen="topics"]');

  // the configuration's topic: saved offsets and lag as the API says
  const canal = await topicOf('cdc.canal');
  ok(canal && canal.subscribed && canal.lag === 0, 'the API: cdc.canal subscribed, lag 0', canal);
  const row = page.locator('#topics tr[data-topic="cdc.canal"]');
  await row.waitFor({ timeout: 15000 });
  const text = await row.textContent();
  ok(text.includes('config') && text.includes('subscribed'), 'topics: cdc.canal from the configuration, subscribed', text);
  const saved = await row.locator('td[data-role="saved"]').allTextContents();
  const fmt = (n) => (n === null ? '–' : n.toLocaleString('en-US'));
  ok(saved.join(' ') === canal.partitions.map((p) => fmt(p.saved)).join(' '),
    'topics: the saved offsets per partition as the API says', saved);
  ok(await row.locator('button[data-action="remove"]').count() === 0, 'topics: no Remove for a configuration topic');

  // a bad name: the API's 400 beside the form
  await page.fill('#topic-new', 'bad/name');
  await page.click('#topic-add button[type=submit]');
  await page.waitForFunction(() => !document.getElementById('topic-add-error').hidden, null, { timeout: 10000 });
  const bad = await page.textContent('#topic-add-error');
  ok(/Kafka topic name/.test(bad), 'topics: a bad name is refused with the API\'s message', bad);

  // added with the form: listed from the metadata, then subscribed
  await page.fill('#topic-new', 'cdc.extra');
  await page.click('#topic-add button[type=submit]');
  // (removed by the API before, it may be listed from the checkpoint already)
  const added = page.locator('#topics tr[data-topic="cdc.extra"]');
  await page.waitForFunction(() => /metadata/.test(document.querySelector('#topics tr[data-topic="cdc.extra"]')?.textContent || ''), null, { timeout: 10000 });
  ok(await added.locator('button[data-action="remove"]').count() === 1, 'topics: the topic added with the form is listed from the metadata, with a Remove button');
  await until(20, 'the daemon subscribes to cdc.extra', async () => (await topicOf('cdc.extra'))?.subscribed);
  await page.waitForFunction(() => /subscribed/.test(document.querySelector('#topics tr[data-topic="cdc.extra"]')?.textContent || ''), null, { timeout: 15000 });
  ok(true, 'topics: the added topic shows as subscribed');
  await page.screenshot({ path: `${SHOTS}/kafka-topics.png`, fullPage: true });

  // removed with its button
  // (its offsets stay in the checkpoint: listed from there, not read)
  await added.locator('button[data-action="remove"]').click();
  await page.waitForFunction(() => {
    const r = document.querySelector('#topics tr[data-topic="cdc.extra"]');
    return !r || !r.querySelector('button[data-action="remove"]');
  }, null, { timeout: 10000 });
  const after = await topicOf('cdc.extra');
  ok(!after || !after.from.includes('metadata'), 'topics: removed with its button (the API no longer has it in the metadata)', after);
  ok(problems.length === 0, 'no page errors', problems);
} finally {
  await browser.close();
}
