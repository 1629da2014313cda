import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEngine, prepareEngines } from '../../server/src/capture/page/content-filters/engines.js';

/** A list folder of its own: two tiny lists, one per engine, and their manifest. */
async function listFolder(adRule: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'daguerre-test-lists-'));
  await writeFile(join(dir, 'ads.txt'), `||ads.example^\n${adRule}\n`);
  await writeFile(join(dir, 'cookies.txt'), '##.cookie-notice\n');
  const entry = (file: string, engine: string) => ({ file, engine, title: file, license: 'test', version: '1', updated: '2026-11-28' });
  await writeFile(
    join(dir, 'lists.json'),
    JSON.stringify({ package: { name: 'test', version: '1' }, lists: [entry('ads.txt', 'ads'), entry('cookies.txt', 'cookies')] }),
  );
  return dir;
}

describe('filter engines: prepared, cached or parsed', () => {
  const folders: string[] = [];
  let lists: string;
  let prepared: string;

  beforeAll(async () => {
    lists = await listFolder('##.banner-ad');
    prepared = join(lists, 'prepared');
    folders.push(lists);
  });
  afterAll(async () => {
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  const cacheFolder = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'daguerre-test-engine-cache-'));
    folders.push(dir);
    return dir;
  };

  it('without a prepared file the lists are parsed once, and the next process reads its cache', async () => {
    const cacheDir = await cacheFolder();
    const parsed = await loadEngine('ads', { listDir: lists, cacheDir, preparedDir: join(lists, 'none') });
    expect(parsed.source).toBe('parsed');
    expect(parsed.engine.match).toBeTypeOf('function');
    expect(await readdir(cacheDir)).toEqual([expect.stringMatching(/^ads-[0-9a-f]{24}\.bin$/)]);
    // Another process: the same folders, a new load (a prepared folder path of its own keeps the loads apart).
    const cached = await loadEngine('ads', { listDir: lists, cacheDir, preparedDir: join(lists, 'none-either') });
    expect(cached.source).toBe('cache');
  });

  it('`daguerre filters prepare` writes both engines, and a new process loads them without parsing or a cache', async () => {
    const written = await prepareEngines(lists, prepared);
    expect(written.map((engine) => engine.name)).toEqual(['ads', 'cookies']);
    expect((await readdir(prepared)).sort()).toEqual([expect.stringMatching(/^ads-/), expect.stringMatching(/^cookies-/)]);
    const cacheDir = await cacheFolder();
    const ads = await loadEngine('ads', { listDir: lists, cacheDir, preparedDir: prepared });
    expect(ads.source).toBe('prepared');
    // The prepared engine is the lists' engine: it blocks what the list blocks.
    const { Request } = await import('@ghostery/adblocker');
    expect(ads.engine.match(Request.fromRawDetails({ url: 'https://ads.example/x.js', type: 'script' })).match).toBe(true);
    expect(ads.engine.match(Request.fromRawDetails({ url: 'https://news.example/x.js', type: 'script' })).match).toBe(false);
    expect((await loadEngine('cookies', { listDir: lists, cacheDir, preparedDir: prepared })).source).toBe('prepared');
    // Nothing was parsed, so nothing was cached.
    expect(await readdir(cacheDir)).toEqual([]);
  });

  it('a prepared file made from other lists is never read: the changed lists are parsed', async () => {
    const changed = await listFolder('##.other-ad');
    folders.push(changed);
    const cacheDir = await cacheFolder();
    // The earlier lists' prepared engines, put where the changed lists' would be.
    const loaded = await loadEngine('ads', { listDir: changed, cacheDir, preparedDir: prepared });
    expect(loaded.source).toBe('parsed');
  });

  it('a damaged prepared file is passed over, not trusted', async () => {
    const damaged = await mkdtemp(join(tmpdir(), 'daguerre-test-prepared-'));
    folders.push(damaged);
    const [file] = (await readdir(prepared)).filter((name) => name.startsWith('cookies-'));
    await writeFile(join(damaged, file!), 'not an engine');
    const loaded = await loadEngine('cookies', { listDir: lists, cacheDir: await cacheFolder(), preparedDir: damaged });
    expect(loaded.source).toBe('parsed');
  });
});
