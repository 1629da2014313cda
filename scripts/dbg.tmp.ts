import puppeteer from 'puppeteer';
import { CHROMIUM_BASE_FLAGS } from '../server/src/capture/browser-manager.js';
import { CookieBannerSession, loadConsentEngineAssets } from '../server/src/capture/content-filters/cookie-banners.js';
import { DocumentStartRegistry } from '../server/src/capture/content-filters/document-start.js';
import { loadEngine } from '../server/src/capture/content-filters/engines.js';
const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...CHROMIUM_BASE_FLAGS] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 800 });
const assets = await loadConsentEngineAssets(); const { engine } = await loadEngine('cookies');
for (const path of (process.argv[2] ?? 'cookiebot.html').split(',')) {
  const url = `http://127.0.0.1:18921/cmp/${path}`;
  const s = new CookieBannerSession(assets, engine, { detectionMs: 100, popupMs: 400, actionMs: 800, settleMs: 100, pollMs: 25 });
  const reg = new DocumentStartRegistry(page);
  let t = Date.now();
  await s.beforeNavigate(reg, url);
  console.log('setup', Date.now() - t); t = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  console.log('load', Date.now() - t);
  await new Promise((r) => setTimeout(r, Number(process.argv[3] ?? 0)));
  t = Date.now();
  const report = await s.afterLoad(page, Date.now() + 10000);
  console.log(path, 'afterLoad', Date.now() - t, JSON.stringify(report));
  console.log(await page.evaluate(`JSON.stringify({ cb: window.Cookiebot && window.Cookiebot.dialog, vis: [...document.querySelectorAll('[id*=ookie],[id*=onetrust]')].map(e => e.id + ':' + getComputedStyle(e).display).slice(0,5) })`));
  await reg.remove();
}
await browser.close();
