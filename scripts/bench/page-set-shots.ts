/**
 * The two contenders of the page set (docs/performance.md), each behind the same `shot` call:
 *   - the service over HTTP, at its default concurrency, with the key in `x-api-key`;
 *   - the floor: what a puppeteer script gets from the binary the service runs (Debian's
 *     chromium-headless-shell) with a page kept open — goto(load) and Chromium's default
 *     screenshot (no optimizeForSpeed). At 4 clients, four kept pages, each in an incognito context
 *     of its own: several pages of one context can hang page.screenshot (background tabs do not
 *     paint).
 */
import { existsSync } from 'node:fs';
import type { BrowserContext, Page } from 'puppeteer-core';
import { HEADLESS_SHELL } from '../../server/src/chromium-binaries.js';
import { launchRaw, VIEWPORT, type RawBrowser } from './baselines.js';
import { timedGet, type ServiceHandle } from './service.js';
import { nowMs, pngSize } from './stats.js';

export type ShotFormat = 'png' | 'jpeg' | 'webp';

export interface SetPage {
  name: string;
  /** Path on the bench fixture server. */
  path: string;
  fullPage: boolean;
}

export interface Shot {
  ok: boolean;
  ms: number;
  bytes: Uint8Array;
  /** Why the shot is not good (status, wrong format or size). */
  error?: string;
  serverTiming?: string;
}

export interface Contender {
  name: 'service' | 'floor' | 'browserless';
  /** Root of its process tree (CPU, PSS). */
  pid: number;
  /** `lane`: which of the 4 clients asks (the floor keeps one page per lane); none for sequential. */
  shot(page: SetPage, format: ShotFormat, lane?: number): Promise<Shot>;
  /**
   * Waits until what it does after an answer (closing a browser) is over, so that the next
   * contender's turn does not pay for it; says why when it gave up waiting.
   */
  settle?(): Promise<string | undefined>;
}

const SIGNATURES: Record<ShotFormat, (b: Uint8Array) => boolean> = {
  png: (b) => pngSize(b) !== undefined,
  jpeg: (b) => b[0] === 0xff && b[1] === 0xd8,
  webp: (b) => Buffer.from(b.subarray(0, 4)).toString('latin1') === 'RIFF' && Buffer.from(b.subarray(8, 12)).toString('latin1') === 'WEBP',
};

/** Why `bytes` is not the image asked for, or undefined when it is (PNGs: 1920 wide, 1080 high or taller for full page). */
export function badImage(bytes: Uint8Array, format: ShotFormat, fullPage: boolean): string | undefined {
  if (!SIGNATURES[format](bytes)) return `not a ${format} (${bytes.length} B)`;
  if (format !== 'png') return undefined;
  const size = pngSize(bytes);
  if (!size || size.width !== VIEWPORT.width || (fullPage ? size.height < VIEWPORT.height : size.height !== VIEWPORT.height))
    return `PNG of ${size?.width}×${size?.height}`;
  return undefined;
}

/** `keys`: API keys (organizations) the captures take turns with; the service's own key when none. */
export function serviceContender(
  service: ServiceHandle,
  fixtureOrigin: string,
  lossyQuality: number,
  keys: readonly string[] = [service.apiKey],
): Contender {
  let turn = 0;
  return {
    name: 'service',
    pid: service.pid,
    async shot(page, format) {
      const query = new URLSearchParams({
        url: `${fixtureOrigin}${page.path}`,
        viewportWidth: String(VIEWPORT.width),
        viewportHeight: String(VIEWPORT.height),
        format,
      });
      if (format !== 'png') query.set('imageQuality', String(lossyQuality));
      if (page.fullPage) query.set('fullPage', 'true');
      const apiKey = keys[turn++ % keys.length]!;
      const r = await timedGet(`${service.origin}/capture?${query}`, 120_000, { 'x-api-key': apiKey });
      const error =
        r.status !== 200
          ? `HTTP ${r.status} ${r.error ?? Buffer.from(r.body.subarray(0, 200)).toString('utf8')}`
          : badImage(r.body, format, page.fullPage);
      return { ok: error === undefined, ms: r.ms, bytes: r.body, error, serverTiming: r.serverTiming };
    },
  };
}

/** goto(load) + Chromium's default screenshot of `format` on a kept page. */
async function floorShot(target: Page, url: string, format: ShotFormat, fullPage: boolean, lossyQuality: number): Promise<Shot> {
  const start = nowMs();
  try {
    await target.goto(url, { waitUntil: 'load', timeout: 60_000 });
    const bytes = await target.screenshot({ type: format, fullPage, ...(format === 'png' ? {} : { quality: lossyQuality }) });
    const error = badImage(bytes, format, fullPage);
    return { ok: error === undefined, ms: nowMs() - start, bytes, error };
  } catch (e) {
    return { ok: false, ms: nowMs() - start, bytes: new Uint8Array(), error: e instanceof Error ? e.message : String(e) };
  }
}

export interface Floor extends Contender {
  version: string;
  /**
   * Opens `count` more kept pages, an incognito context each, for the 4-client runs. They are
   * closed again after each page's run, so that the sequential figures are those of a one-page browser.
   */
  openLanes(count: number): Promise<void>;
  closeLanes(): Promise<void>;
  close(): Promise<void>;
}

/** The floor browser, with one kept page for the sequential runs. */
export async function launchFloor(fixtureOrigin: string, lossyQuality: number): Promise<Floor> {
  if (!existsSync(HEADLESS_SHELL))
    throw new Error(
      `${HEADLESS_SHELL} is missing (Debian package chromium-headless-shell, installed by scripts/setup.sh): the floor runs on the binary the service runs`,
    );
  const raw: RawBrowser = await launchRaw([], HEADLESS_SHELL);
  if (raw.pid === undefined) {
    await raw.close();
    throw new Error('the floor browser has no pid');
  }
  let lanes: { context: BrowserContext; page: Page }[] = [];
  const closeLanes = async () => {
    const open = lanes;
    lanes = [];
    for (const lane of open) await lane.context.close().catch(() => undefined);
  };
  return {
    name: 'floor',
    pid: raw.pid,
    version: raw.version,
    shot(page, format, lane) {
      const target = lane === undefined ? raw.page : lanes[lane]?.page;
      if (!target) throw new Error(`no floor page for lane ${lane}: openLanes first`);
      return floorShot(target, `${fixtureOrigin}${page.path}`, format, page.fullPage, lossyQuality);
    },
    async openLanes(count) {
      await closeLanes();
      for (let i = 0; i < count; i++) {
        const context = await raw.browser.createBrowserContext();
        const page = await context.newPage().catch(async (e: unknown) => {
          await context.close().catch(() => undefined);
          throw e;
        });
        lanes.push({ context, page });
        await page.setViewport(VIEWPORT);
      }
    },
    closeLanes,
    async close() {
      await closeLanes();
      await raw.close();
    },
  };
}
