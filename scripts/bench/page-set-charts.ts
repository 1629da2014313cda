/**
 * The `charts` page of the bench's page set (page-set-fixtures.ts): a dashboard of inline SVG
 * charts — bars, lines, an area with a gradient fill, a donut, sparklines — and a table. Charts are
 * what many screenshot users capture (reports, monitoring boards), and their antialiased edges and
 * gradients are neither flat like text nor noisy like a photo, so they load a PNG encoder
 * differently from the other pages. Deterministic: a seeded PRNG, no script, no clock.
 */
import { mulberry32 } from './make-fixtures.js';

const PALETTE = ['#2563eb', '#16a34a', '#ea580c', '#9333ea', '#0891b2', '#dc2626'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A random walk of `n` values between roughly `min` and `max`. */
function series(rnd: () => number, n: number, min: number, max: number): number[] {
  const out: number[] = [];
  let v = min + (max - min) * (0.3 + rnd() * 0.4);
  for (let i = 0; i < n; i++) {
    v = Math.max(min, Math.min(max, v + (rnd() - 0.45) * (max - min) * 0.18));
    out.push(Math.round(v));
  }
  return out;
}

const f1 = (x: number) => x.toFixed(1);

/** Points of a polyline through `values` in a w×h box (y grows downwards), scaled to 0..top. */
function points(values: readonly number[], w: number, h: number, top: number): string {
  const step = w / Math.max(1, values.length - 1);
  return values.map((v, i) => `${f1(i * step)},${f1(h - (v / top) * h)}`).join(' ');
}

function gridLines(w: number, h: number, top: number, ticks = 4): string {
  return Array.from({ length: ticks + 1 }, (_, i) => {
    const y = f1(h - (i / ticks) * h);
    return `<line x1="0" x2="${w}" y1="${y}" y2="${y}" stroke="#e5e7eb"/><text x="-8" y="${y}" dy="4" text-anchor="end">${Math.round((top * i) / ticks)}</text>`;
  }).join('');
}

function monthLabels(w: number, h: number, n: number): string {
  const step = w / Math.max(1, n - 1);
  return Array.from({ length: n }, (_, i) => `<text x="${f1(i * step)}" y="${h + 20}" text-anchor="middle">${MONTHS[i % 12]}</text>`).join(
    '',
  );
}

function barChart(rnd: () => number): string {
  const [w, h, top] = [520, 220, 1000];
  const groups = 12;
  const a = series(rnd, groups, 200, 950);
  const b = series(rnd, groups, 150, 800);
  const slot = w / groups;
  const bars = a
    .map((v, i) => {
      const x = i * slot + slot * 0.15;
      const bw = slot * 0.33;
      const v2 = b[i] ?? 0;
      return (
        `<rect x="${f1(x)}" y="${f1(h - (v / top) * h)}" width="${f1(bw)}" height="${f1((v / top) * h)}" rx="3" fill="url(#bar-a)"/>` +
        `<rect x="${f1(x + bw + 2)}" y="${f1(h - (v2 / top) * h)}" width="${f1(bw)}" height="${f1((v2 / top) * h)}" rx="3" fill="url(#bar-b)"/>` +
        `<text x="${f1(x + bw)}" y="${h + 20}" text-anchor="middle">${MONTHS[i]}</text>`
      );
    })
    .join('');
  return `<svg viewBox="-40 -10 580 260" width="100%" height="260" role="img" aria-label="Orders per month">
  <defs>
    <linearGradient id="bar-a" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#60a5fa"/><stop offset="1" stop-color="#1d4ed8"/></linearGradient>
    <linearGradient id="bar-b" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#86efac"/><stop offset="1" stop-color="#15803d"/></linearGradient>
  </defs>
  <g class="axis">${gridLines(w, h, top)}</g>${bars}
</svg>`;
}

function lineChart(rnd: () => number): string {
  const [w, h, top] = [520, 220, 100];
  const lines = [0, 1, 2]
    .map(
      (k) =>
        `<polyline points="${points(series(rnd, 30, 10, 95), w, h, top)}" fill="none" stroke="${PALETTE[k + 2]}" stroke-width="2.5" stroke-linejoin="round"/>`,
    )
    .join('');
  return `<svg viewBox="-40 -10 580 260" width="100%" height="260" role="img" aria-label="Latency by region">
  <g class="axis">${gridLines(w, h, top)}${monthLabels(w, h, 12)}</g>${lines}
</svg>`;
}

function areaChart(rnd: () => number): string {
  const [w, h, top] = [1140, 220, 5000];
  const layers = [
    { values: series(rnd, 60, 2600, 4800), colour: '#7c3aed', id: 'area-a' },
    { values: series(rnd, 60, 900, 2500), colour: '#0ea5e9', id: 'area-b' },
  ];
  const defs = layers
    .map(
      (l) =>
        `<linearGradient id="${l.id}" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${l.colour}" stop-opacity="0.55"/><stop offset="1" stop-color="${l.colour}" stop-opacity="0.03"/></linearGradient>`,
    )
    .join('');
  const shapes = layers
    .map((l) => {
      const line = points(l.values, w, h, top);
      return `<polygon points="0,${h} ${line} ${w},${h}" fill="url(#${l.id})"/><polyline points="${line}" fill="none" stroke="${l.colour}" stroke-width="2"/>`;
    })
    .join('');
  return `<svg viewBox="-50 -10 1200 260" width="100%" height="260" role="img" aria-label="Active users">
  <defs>${defs}</defs>
  <g class="axis">${gridLines(w, h, top)}${monthLabels(w, h, 12)}</g>${shapes}
</svg>`;
}

function donut(rnd: () => number): string {
  const shares = PALETTE.map(() => 5 + rnd() * 30);
  const total = shares.reduce((s, x) => s + x, 0);
  const r = 80;
  const circumference = 2 * Math.PI * r;
  let offset = 0;
  const arcs = shares
    .map((s, i) => {
      const len = (s / total) * circumference;
      const arc = `<circle r="${r}" cx="110" cy="110" fill="none" stroke="${PALETTE[i]}" stroke-width="34" stroke-dasharray="${f1(len)} ${f1(circumference - len)}" stroke-dashoffset="${f1(-offset)}" transform="rotate(-90 110 110)"/>`;
      offset += len;
      return arc;
    })
    .join('');
  const legend = shares
    .map(
      (s, i) =>
        `<li><span style="background:${PALETTE[i]}"></span>${['Direct', 'Search', 'Social', 'E-mail', 'Partners', 'Other'][i]} <b>${((s / total) * 100).toFixed(1)} %</b></li>`,
    )
    .join('');
  return `<div class="donut"><svg viewBox="0 0 220 220" width="220" height="220" role="img" aria-label="Traffic sources">${arcs}<text x="110" y="106" text-anchor="middle" class="big">${Math.round(total * 1000).toLocaleString('en')}</text><text x="110" y="128" text-anchor="middle">visits</text></svg><ul class="legend">${legend}</ul></div>`;
}

function sparkCard(rnd: () => number, i: number): string {
  const values = series(rnd, 24, 10, 90);
  const last = values[values.length - 1] ?? 0;
  const first = values[0] ?? 1;
  const change = ((last - first) / first) * 100;
  const colour = change >= 0 ? '#16a34a' : '#dc2626';
  const names = ['Revenue', 'Orders', 'Sign-ups', 'Churn', 'Tickets', 'Uptime'];
  return `<div class="card kpi"><div class="label">${names[i]}</div><div class="value">${(last * 137).toLocaleString('en')}</div>
    <div class="change" style="color:${colour}">${change >= 0 ? '▲' : '▼'} ${Math.abs(change).toFixed(1)} %</div>
    <svg viewBox="0 0 200 48" width="100%" height="48"><polygon points="0,48 ${points(values, 200, 48, 100)} 200,48" fill="${colour}" opacity="0.12"/><polyline points="${points(values, 200, 48, 100)}" fill="none" stroke="${colour}" stroke-width="2"/></svg></div>`;
}

function table(rnd: () => number): string {
  const regions = [
    'Amsterdam',
    'Frankfurt',
    'London',
    'Paris',
    'Madrid',
    'Milan',
    'Stockholm',
    'Warsaw',
    'Dublin',
    'Vienna',
    'Zurich',
    'Lisbon',
  ];
  const rows = regions
    .map((region) => {
      const requests = Math.round(20_000 + rnd() * 180_000);
      const errors = (rnd() * 2).toFixed(2);
      const p95 = Math.round(180 + rnd() * 600);
      const status = rnd() < 0.8 ? '<span class="ok">Healthy</span>' : '<span class="warn">Degraded</span>';
      return `<tr><td>${region}</td><td>${requests.toLocaleString('en')}</td><td>${errors} %</td><td>${p95} ms</td><td>${status}</td></tr>`;
    })
    .join('');
  return `<table><thead><tr><th>Region</th><th>Requests</th><th>Errors</th><th>p95</th><th>Status</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function chartsHtml(): string {
  const rnd = mulberry32(3201);
  const kpis = Array.from({ length: 6 }, (_, i) => sparkCard(rnd, i)).join('\n      ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Operations dashboard</title>
<style>
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; background: #f3f4f6; color: #111827; }
  header { display: flex; align-items: center; justify-content: space-between; height: 56px; padding: 0 28px; background: #111827; color: #f9fafb; }
  header nav a { color: #d1d5db; margin-left: 20px; text-decoration: none; }
  main { padding: 20px 28px; display: grid; grid-template-columns: repeat(6, 1fr); gap: 16px; }
  .card { background: #fff; border: 1px solid #e5e7eb; border-radius: 10px; padding: 14px 16px; }
  .card h2 { margin: 0 0 8px; font-size: 15px; }
  .kpi .label { color: #6b7280; font-size: 12px; text-transform: uppercase; letter-spacing: .05em; }
  .kpi .value { font-size: 24px; font-weight: 700; }
  .wide { grid-column: span 3; } .full { grid-column: span 4; } .side { grid-column: span 2; }
  svg text { font-size: 11px; fill: #6b7280; } svg .big { font-size: 24px; font-weight: 700; fill: #111827; }
  .donut { display: flex; align-items: center; gap: 12px; } .legend { list-style: none; padding: 0; margin: 0; }
  .legend span { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
  table { width: 100%; border-collapse: collapse; } th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #f0f1f3; }
  th { color: #6b7280; font-weight: 600; font-size: 12px; } .ok { color: #16a34a; } .warn { color: #d97706; }
</style>
</head>
<body>
  <header><strong>Daguerre Ops</strong><nav><a href="#">Overview</a><a href="#">Regions</a><a href="#">Incidents</a><a href="#">Settings</a></nav></header>
  <main>
      ${kpis}
    <section class="card wide"><h2>Orders per month</h2>${barChart(rnd)}</section>
    <section class="card wide"><h2>Latency by region (ms)</h2>${lineChart(rnd)}</section>
    <section class="card full"><h2>Active users</h2>${areaChart(rnd)}</section>
    <section class="card side"><h2>Traffic sources</h2>${donut(rnd)}</section>
    <section class="card full"><h2>Regions</h2>${table(rnd)}</section>
    <section class="card side"><h2>Error budget</h2>${lineChart(rnd)}</section>
  </main>
</body>
</html>
`;
}
