// chart: a small line chart on a <canvas> for the overview's live figures:
// one or more series of [time ms, value] over the last `span` ms, each on
// its own scale from 0 to its maximum, with a legend under it. `store`
// (optional, one array per series) keeps the points when the chart is
// drawn anew (the overview shown again keeps its last minutes).
import { h, num } from './dom.js';

const COLORS = ['#2563eb', '#d97706', '#059669', '#dc2626'];

export function liveChart(series, spanMs, store) {
  const canvas = h('canvas', { class: 'chart', height: 160, role: 'img',
                               'aria-label': `the last ${Math.round(spanMs / 60000)} minutes` });
  const legend = h('ul', { class: 'legend' });
  const data = store || series.map(() => []);
  const el = h('figure', { class: 'chart-box' }, canvas, legend);

  function draw() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(200, canvas.clientWidth || 600), hgt = 160;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(hgt * dpr);
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    // from the oldest point kept (at least a minute back) to now: a page
    // opened a moment ago fills the width too
    const now = Date.now(), pad = 6;
    const oldest = Math.min(now - 60000, ...data.map((p) => (p.length ? p[0][0] : now)));
    const range = Math.min(spanMs, now - oldest);
    g.strokeStyle = '#e5e7eb';
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = pad + ((hgt - 2 * pad) * i) / 4;
      g.beginPath(); g.moveTo(0, y); g.lineTo(w, y); g.stroke();
    }
    data.forEach((pts, i) => {
      if (pts.length === 0) return;
      const max = Math.max(1, ...pts.map((p) => p[1]));
      g.strokeStyle = COLORS[i % COLORS.length];
      g.lineWidth = 2;
      g.beginPath();
      pts.forEach(([t, v], j) => {
        const x = w - ((now - t) / range) * w;
        const y = hgt - pad - (v / max) * (hgt - 2 * pad);
        if (j === 0) g.moveTo(x, y); else g.lineTo(x, y);
      });
      g.stroke();
    });
    legend.replaceChildren(...series.map((s, i) => {
      const pts = data[i], last = pts.length ? pts[pts.length - 1][1] : null;
      const max = pts.length ? Math.max(...pts.map((p) => p[1])) : null;
      const sw = h('span', { class: `swatch c${i % COLORS.length}` });
      return h('li', {}, sw, `${s.label}: ${last === null ? '–' : num(round(last))}`,
               h('span', { class: 'muted' }, ` (max ${max === null ? '–' : num(round(max))})`));
    }));
  }

  return {
    el,
    // add one point per series (values in series order) and redraw
    push(values) {
      const now = Date.now();
      values.forEach((v, i) => {
        if (v === null || v === undefined || !isFinite(v)) return;
        data[i].push([now, v]);
        while (data[i].length && now - data[i][0][0] > spanMs) data[i].shift();
      });
      draw();
    },
    draw,
  };
}

function round(v) { return Math.abs(v) >= 10 ? Math.round(v) : Math.round(v * 10) / 10; }
