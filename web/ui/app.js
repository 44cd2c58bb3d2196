// app: the UI's shell. Loads the list of screens (/ui/screens.json, one ES
// module per file in web/ui/screens/), builds the navigation, shows the
// screen named in the URL's #fragment and stops its polling when another
// one is shown. A screen module exports `title`, `order` and
// `mount(element)`, which returns a function that stops it, and may export
// `available()` (async): false leaves it out (the Topics screen of a
// binlog source).
import { api, get, toLogin } from './api.js';
import { h, clear } from './dom.js';

const main = document.getElementById('screen');
const nav = document.getElementById('nav');
let screens = [];
let stop = null;

function showAppError(e) {
  const el = document.getElementById('app-error');
  el.textContent = e ? (e.text || String(e.message || e)) : '';
  el.hidden = !e;
}

async function show() {
  const name = location.hash.slice(1) || 'overview';
  const screen = screens.find((s) => s.name === name) || screens[0];
  if (!screen) return;
  if (stop) { stop(); stop = null; }
  for (const a of nav.querySelectorAll('a'))
    a.setAttribute('aria-current', a.dataset.screen === screen.name ? 'page' : 'false');
  document.title = `${screen.mod.title} · searchsync`;
  clear(main);
  main.dataset.screen = screen.name;
  const root = h('div', { class: 'screen', id: `screen-${screen.name}` });
  main.append(root);
  stop = screen.mod.mount(root) || null;
}

async function start() {
  const names = await get('/ui/screens.json');
  const mods = await Promise.all(names.map(async (name) => {
    try {
      return { name, mod: await import(`./screens/${name}.js`) };
    } catch (e) {
      showAppError(new Error(`the screen ${name} did not load: ${e.message}`));
      return null;
    }
  }));
  const shown = await Promise.all(mods.map(async (m) => {
    if (!m || typeof m.mod.available !== 'function') return m;
    try { return (await m.mod.available()) ? m : null; } catch (e) { return m; }
  }));
  screens = shown.filter(Boolean).sort((a, b) => (a.mod.order ?? 99) - (b.mod.order ?? 99));
  nav.append(...screens.map((s) =>
    h('a', { href: `#${s.name}`, 'data-screen': s.name }, s.mod.title)));
  window.addEventListener('hashchange', show);
  document.getElementById('logout').addEventListener('click', async () => {
    try { await api('POST', '/api/v1/logout'); } catch (e) { /* gone already */ }
    toLogin();
  });
  get('/api/v1/live').then((l) => {
    document.getElementById('source').textContent = `source ${l.source}`;
  }).catch(() => {});
  await show();
}

start().catch((e) => showAppError(e));
