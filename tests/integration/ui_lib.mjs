// tests/integration/ui_lib.mjs — shared by the browser halves of the UI
// tests (t_ui_*.mjs): the environment, playwright-core from PW_DIR, checks
// that throw with what was seen, polling, and the API with the token.
import { createRequire } from 'node:module';

export const env = (k) => { if (!process.env[k]) throw new Error(`${k} is not set`); return process.env[k]; };
export const URL_ = env('UI_URL'), TOKEN = env('TOKEN'), SHOTS = env('SHOTS');
export const { chromium } = createRequire(`${env('PW_DIR')}/`)('playwright-core');

export const counter = { checks: 0 };
export function ok(cond, what, seen) {
  if (!cond) throw new Error(`${what}${seen === undefined ? '' : `; seen: ${JSON.stringify(seen)}`}`);
  counter.checks++;
  console.log(`ok: ${what}`);
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export async function until(secs, what, fn) {
  const end = Date.now() + secs * 1000;
  let last;
  for (;;) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e.message; }
    if (Date.now() > end) throw new Error(`timed out after ${secs} s waiting for ${what}; last: ${JSON.stringify(last)}`);
    await sleep(200);
  }
}
// the API with the token (what a script sees)
export async function apiGet(path) {
  const r = await fetch(URL_ + path, { headers: { Authorization: `Bearer ${TOKEN}` } });
  if (!r.ok) throw new Error(`GET ${path}: HTTP ${r.status}`);
  return r.json();
}
