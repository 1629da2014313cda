import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ENGINE_VERSION, FiltersEngine } from '@ghostery/adblocker';
import { packageFile } from '../../../package-files.js';
import { ignoreBecause } from '../../../ignore-error.js';

/** ads: removeAds (network + cosmetic filters). cookies: removeCookieBanners (cosmetic cookie-notice filters). */
export type EngineName = 'ads' | 'cookies';

/** server/filter-lists: the bundled lists and their manifest (written by `npm run filters:update`). */
export const FILTER_LIST_DIR = packageFile('filter-lists');
/** Where parsed engines are kept between starts: parsing the ad lists takes seconds, loading the cache milliseconds. */
export const DEFAULT_ENGINE_CACHE_DIR = join(tmpdir(), 'daguerre-filter-engines');
/**
 * Where a list folder's engines are in their serialized form (`filter-lists/prepared` of the
 * package), made when the package is packed and the image is built (`daguerre filters prepare`): a
 * new process, in a new pod with an empty temporary directory, loads them in tens of milliseconds
 * instead of parsing the lists for seconds of CPU beside its first jobs. Named like the cache's
 * files, by the lists, the settings and the engine's format version, so a prepared file made for
 * other lists or another version of the engine is never read.
 */
const preparedDirOf = (listDir: string) => join(listDir, 'prepared');

export interface ListManifestEntry {
  file: string;
  engine: EngineName;
  title: string;
  license: string;
  version: string;
  updated: string;
}

export interface ListManifest {
  package: { name: string; version: string };
  lists: ListManifestEntry[];
}

export interface LoadedEngine {
  engine: FiltersEngine;
  /** Where it came from: prepared with the package, the serialized cache, or parsed from the lists now. */
  source: 'prepared' | 'cache' | 'parsed';
  ms: number;
  lists: ListManifestEntry[];
}

export interface EngineLoadOptions {
  listDir?: string;
  /** The prepared engines (the list folder's, preparedDirOf, unless a test says otherwise); null: none. */
  preparedDir?: string | null;
  /** null turns the on-disk cache off. */
  cacheDir?: string | null;
}

/**
 * Engine settings per use. Network filters only matter for ads; the cookie engine is cosmetic
 * only. Extended (procedural) selectors and scriptlets are left out: the element-hiding rules go in
 * as plain stylesheets (from the document's start and after load), and running the lists'
 * scriptlets in the page's world is not something this service does.
 */
const ENGINE_CONFIG: Record<EngineName, Record<string, boolean>> = {
  ads: {
    loadNetworkFilters: true,
    loadCosmeticFilters: true,
    loadGenericCosmeticsFilters: true,
    loadExtendedSelectors: false,
    enableHtmlFiltering: false,
    loadCSPFilters: false,
  },
  cookies: {
    loadNetworkFilters: false,
    loadCosmeticFilters: true,
    loadGenericCosmeticsFilters: true,
    loadExtendedSelectors: false,
    enableHtmlFiltering: false,
    loadCSPFilters: false,
  },
};

export async function readManifest(listDir = FILTER_LIST_DIR): Promise<ListManifest> {
  return JSON.parse(await readFile(join(listDir, 'lists.json'), 'utf8')) as ListManifest;
}

/**
 * Parsing runs in a worker thread: it takes seconds of CPU for the ad lists, and the event loop
 * keeps serving requests (and Chromium's protocol traffic) meanwhile. The worker is plain
 * JavaScript on purpose: the service runs its TypeScript through tsx, which worker threads do not
 * inherit.
 */
const PARSE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { FiltersEngine } = require(workerData.modulePath);
const text = workerData.files.map((file) => readFileSync(file, 'utf8')).join('\\n');
const engine = FiltersEngine.parse(text, workerData.config);
const bytes = engine.serialize();
parentPort.postMessage(bytes, [bytes.buffer]);
`;

function parseInWorker(files: string[], config: Record<string, boolean>): Promise<Uint8Array> {
  const modulePath = createRequire(import.meta.url).resolve('@ghostery/adblocker');
  return new Promise((resolve, reject) => {
    const worker = new Worker(PARSE_WORKER, { eval: true, workerData: { modulePath, files, config } });
    // A background parse never keeps a stopping process alive.
    worker.unref();
    worker.once('message', (bytes: Uint8Array) => {
      resolve(bytes);
      // Ends the idle thread at once; its promise is fulfilled at the exit and never rejects.
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the filter-list parser stopped with exit code ${code}`));
    });
  });
}

/** Engines being loaded or loaded, per process: engines are read-only, so every service instance in a process (the test suite starts many) shares one. */
const loaded = new Map<string, Promise<LoadedEngine>>();

/**
 * Loads one engine: from the serialized cache when the lists and the engine version are unchanged,
 * else by parsing the lists. Shared by the whole process; a failure is forgotten, so that the next
 * call tries again.
 */
export function loadEngine(name: EngineName, options: EngineLoadOptions = {}): Promise<LoadedEngine> {
  const listDir = options.listDir ?? FILTER_LIST_DIR;
  const cacheDir = options.cacheDir === undefined ? DEFAULT_ENGINE_CACHE_DIR : options.cacheDir;
  const preparedDir = options.preparedDir === undefined ? preparedDirOf(listDir) : options.preparedDir;
  const key = JSON.stringify([name, listDir, cacheDir, preparedDir]);
  let loading = loaded.get(key);
  if (!loading) {
    loading = buildEngine(name, listDir, cacheDir, preparedDir);
    loaded.set(key, loading);
    loading.catch(() => loaded.delete(key));
  }
  return loading;
}

interface EngineSource {
  lists: ListManifestEntry[];
  files: string[];
  config: Record<string, boolean>;
  /** `<name>-<hash of the engine version, settings and lists>.bin`: the cache's and the prepared file's name. */
  fileName: string;
}

async function engineSource(name: EngineName, listDir: string): Promise<EngineSource> {
  const manifest = await readManifest(listDir);
  const lists = manifest.lists.filter((list) => list.engine === name);
  if (lists.length === 0) throw new Error(`no filter list for the ${name} engine in ${join(listDir, 'lists.json')}`);
  const files = lists.map((list) => join(listDir, list.file));
  const config = ENGINE_CONFIG[name];
  const hash = createHash('sha256').update(`${ENGINE_VERSION}\n${JSON.stringify(config)}\n`);
  for (const file of files) hash.update(await readFile(file));
  return { lists, files, config, fileName: `${name}-${hash.digest('hex').slice(0, 24)}.bin` };
}

/** An engine from a serialized file; undefined when there is none or it cannot be read (a damaged or foreign file). */
async function readSerialized(file: string): Promise<FiltersEngine | undefined> {
  const bytes = await readFile(file).catch(ignoreBecause('no cache file yet: the lists are parsed'));
  if (!bytes) return undefined;
  try {
    return FiltersEngine.deserialize(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch {
    return undefined;
  }
}

async function buildEngine(name: EngineName, listDir: string, cacheDir: string | null, preparedDir: string | null): Promise<LoadedEngine> {
  const started = Date.now();
  const { lists, files, config, fileName } = await engineSource(name, listDir);
  const loadedFrom = (engine: FiltersEngine, source: LoadedEngine['source']): LoadedEngine => ({
    engine,
    source,
    ms: Date.now() - started,
    lists,
  });

  const prepared = preparedDir ? await readSerialized(join(preparedDir, fileName)) : undefined;
  if (prepared) return loadedFrom(prepared, 'prepared');
  const cacheFile = cacheDir ? join(cacheDir, fileName) : undefined;
  const cached = cacheFile ? await readSerialized(cacheFile) : undefined;
  if (cached) return loadedFrom(cached, 'cache');

  // Parsed now, and the cache (re)written.
  const bytes = await parseInWorker(files, config);
  const engine = FiltersEngine.deserialize(bytes);
  if (cacheFile && cacheDir)
    await writeCache(cacheDir, cacheFile, name, bytes).catch(ignoreBecause('the cache only spares the next start a parse'));
  return loadedFrom(engine, 'parsed');
}

/**
 * `daguerre filters prepare`: parses every engine's lists and writes its serialized form into
 * `outDir` (the list folder's prepared engines), replacing the files of older lists. Run when the package is packed
 * and when the image is built.
 */
export async function prepareEngines(
  listDir = FILTER_LIST_DIR,
  outDir = preparedDirOf(listDir),
): Promise<{ name: EngineName; file: string; bytes: number }[]> {
  const written: { name: EngineName; file: string; bytes: number }[] = [];
  for (const name of ['ads', 'cookies'] as const) {
    const { files, config, fileName } = await engineSource(name, listDir);
    const bytes = await parseInWorker(files, config);
    const file = join(outDir, fileName);
    await writeCache(outDir, file, name, bytes);
    written.push({ name, file, bytes: bytes.byteLength });
  }
  return written;
}

/** Written under a temporary name and renamed, so a concurrent start never reads half a file; older versions are removed. */
async function writeCache(cacheDir: string, cacheFile: string, name: EngineName, bytes: Uint8Array): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const partial = `${cacheFile}.${process.pid}.tmp`;
  await writeFile(partial, bytes);
  await rename(partial, cacheFile);
  for (const entry of await readdir(cacheDir)) {
    const path = join(cacheDir, entry);
    if (entry.startsWith(`${name}-`) && entry.endsWith('.bin') && path !== cacheFile) await rm(path, { force: true });
  }
}
