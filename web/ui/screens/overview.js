// overview: is the sync keeping up? Lag, throughput, queue, changes in
// flight, blown fuses, dead letters, whether the engine answers (GET
// /api/v1/status and /api/v1/live, every 3 s), with a chart of the last
// 5 minutes of throughput, queue and in flight.
import { get } from '../api.js';
import { h, num, dur, badge, table, section, errorSlot, every } from '../dom.js';
import { liveChart } from '../chart.js';

export const title = 'Overview';
export const order = 1;

const POLL_MS = 3000;
// kept while the page is open: the chart's points and the last poll
const history = [[], [], []];
let prev = null;

function stat(key, label) {
  const value = h('span', { class: 'value' }, '–');
  const note = h('span', { class: 'note muted' });
  const el = h('div', { class: 'stat', 'data-stat': key }, h('span', { class: 'label' }, label),
               value, note);
  el.set = (v, n, bad) => {
    value.textContent = v;
    note.textContent = n || '';
    el.classList.toggle('bad', !!bad);
  };
  return el;
}

export function mount(root) {
  const stats = {
    lag: stat('lag', 'Lag'),
    throughput: stat('throughput', 'Throughput'),
    queued: stat('queued', 'Queued'),
    inflight: stat('inflight', 'In flight'),
    fuses: stat('fuses', 'Fuses blown'),
    dead: stat('dead_letters', 'Dead letters'),
    engine: stat('engine', 'Engine'),
    reader: stat('reader', 'Binlog reader'),
  };
  const chart = liveChart([{ label: 'changes/s' }, { label: 'queued' }, { label: 'in flight' }],
                          5 * 60 * 1000, history);
  const liveErr = errorSlot(), statusErr = errorSlot();
  const indices = h('div', { id: 'overview-indices' });
  const problems = h('div');
  root.append(
    h('h1', {}, 'Overview'),
    liveErr,
    h('div', { class: 'stats' }, Object.values(stats)),
    section('Last minutes (up to 5)', chart.el),
    section('Indices', statusErr, problems, indices));

  const onResize = () => chart.draw();
  window.addEventListener('resize', onResize);

  const stopLive = every(POLL_MS, async () => {
    let l;
    try { l = await get('/api/v1/live'); liveErr.show(null); } catch (e) { liveErr.show(e); return; }
    const now = Date.now();
    let rate = null;
    if (prev && now > prev.t && l.acknowledged >= prev.ack) rate = (l.acknowledged - prev.ack) / ((now - prev.t) / 1000);
    prev = { t: now, ack: l.acknowledged };
    stats.throughput.set(rate === null ? '–' : `${num(Math.round(rate * 10) / 10)}/s`,
                         `${num(l.acknowledged)} acknowledged since start`);
    stats.queued.set(num(l.queued), 'changes waiting for delivery');
    stats.inflight.set(num(l.inflight), 'sent, not yet acknowledged');
    const fuses = l.fuses_blown || [];
    stats.fuses.set(num(fuses.length), fuses.length ? fuses.join(', ') : 'none', fuses.length > 0);
    stats.engine.set(l.engine_up ? 'up' : 'down', l.engine_up ? 'answers' : 'does not answer', !l.engine_up);
    const r = l.reader;
    stats.reader.set(!r ? 'standby' : r.reading ? (r.at_end ? 'at the end' : 'reading') : 'stopped',
                     r ? r.position : 'another node reads the binlog', r && !r.reading);
    stats.dead.dataset.sinceStart = l.dead_letters;
    chart.push([rate, l.queued, l.inflight]);
  });

  const stopStatus = every(POLL_MS, async () => {
    let s;
    try { s = await get('/api/v1/status'); statusErr.show(null); } catch (e) { statusErr.show(e); return; }
    const src = s.source || {};
    // without the metadata server the checkpoint, the index configs and the
    // dead letters are not known: said so, not shown as none
    const unknown = s.metadata && s.metadata.reachable === false;
    if (unknown) stats.lag.set('not known', 'the metadata server cannot be read', true);
    else if (src.caught_up) stats.lag.set('caught up', `checkpoint ${dur(src.checkpoint_age_s)} old`);
    else stats.lag.set(src.bytes_behind === null || src.bytes_behind === undefined ? 'behind' : `${num(src.bytes_behind)} B`,
                       `behind the binlog's end; checkpoint ${dur(src.checkpoint_age_s)} old`, true);
    const waiting = (s.dead_letters || []).reduce((a, d) => a + d.count, 0);
    if (unknown) stats.dead.set('–', 'not known without the metadata server', true);
    else stats.dead.set(num(waiting), `waiting; ${num(Number(stats.dead.dataset.sinceStart || 0))} since start`,
                        waiting > 0);
    problems.replaceChildren(...(s.errors || []).map((e) => h('p', { class: 'error' }, String(e))));
    indices.replaceChildren(table([
      { label: 'Index', cell: (i) => i.alias },
      { label: 'State', cell: (i) => badge(i.state) },
      { label: 'Version', cell: (i) => i.current_version === null ? '–' : `v${i.current_version}` },
      { label: 'Building', cell: (i) => i.building_version === null ? '–' : `v${i.building_version}` },
      { label: 'Alias →', cell: (i) => (i.engine && i.engine.alias_targets || []).join(', ') || '–' },
      { label: 'Documents', class: 'num', cell: (i) => num(i.engine ? i.engine.documents : null) },
    ], s.indices, unknown ? 'Not known: the metadata server cannot be read.' : 'No index config.'));
  });

  return () => { stopLive(); stopStatus(); window.removeEventListener('resize', onResize); };
}
