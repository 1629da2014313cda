/**
 * Refreshes the filter lists bundled in server/filter-lists/ (`npm run filters:update`).
 *
 * The service never downloads a list at run time: it reads the files listed in
 * server/filter-lists/lists.json. This script replaces those files with newer versions and
 * records each list's version, date and SHA-256 in the manifest. The engines are rebuilt on the
 * next start (their cached serialization is keyed by the lists' content).
 *
 *   npm run filters:update                       # from the npm registry (the default)
 *   npm run filters:update -- --source web       # from each list's own URL (needs internet)
 *   npm run filters:update -- --version 3.3.x    # a given version of the npm package
 *
 * Source `npm`: the raw text of every list is taken from the package named in the manifest
 * (@adguard/dnr-rulesets, republished by AdGuard whenever their filters change; each ruleset there
 * carries the full text of its list). It needs only the npm registry, which is all some build
 * machines can reach. Source `web`: each list's `url` (AdGuard's filter server).
 *
 * Exit status 0 when every list was written, 1 otherwise (no file is changed then).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIST_DIR = join(ROOT, 'server', 'filter-lists');
const MANIFEST = join(LIST_DIR, 'lists.json');
/** A real list has thousands of rules; fewer means the download or the package format went wrong. */
const MIN_RULES = 500;

interface ListEntry {
  file: string;
  engine: 'ads' | 'cookies';
  title: string;
  description: string;
  rulesetId: number;
  url: string;
  homepage: string;
  license: string;
  version: string;
  updated: string;
  sha256: string;
}

interface Manifest {
  $comment?: string;
  package: { name: string; version: string };
  lists: ListEntry[];
}

function parseArgs(argv: string[]): { source: 'npm' | 'web'; version: string } {
  let source: 'npm' | 'web' = 'npm';
  let version = 'latest';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--source') {
      const value = argv[++i];
      if (value !== 'npm' && value !== 'web') throw new Error('--source must be npm or web');
      source = value;
    } else if (arg === '--version') {
      version = argv[++i] ?? '';
      if (!version) throw new Error('--version needs a value');
    } else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run filters:update -- [--source npm|web] [--version <package version>]');
      process.exit(0);
    } else {
      throw new Error(`unknown argument ${arg} (try --help)`);
    }
  }
  return { source, version };
}

/** The rawFilterList string of a DNR ruleset file, wherever the package version keeps it. */
function rawListOf(ruleset: unknown): string | undefined {
  const queue: unknown[] = [ruleset];
  let visited = 0;
  while (queue.length > 0 && visited++ < 50) {
    const value = queue.shift();
    if (Array.isArray(value)) {
      if (value.length > 0) queue.push(value[0]);
    } else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
        if (key === 'rawFilterList' && typeof child === 'string') return child;
        if (child && typeof child === 'object') queue.push(child);
      }
    }
  }
  return undefined;
}

async function fromNpm(manifest: Manifest, version: string, work: string): Promise<{ texts: Map<string, string>; packageVersion: string }> {
  const spec = `${manifest.package.name}@${version}`;
  console.log(`npm pack ${spec} …`);
  const { stdout } = await run('npm', ['pack', spec, '--pack-destination', work, '--json', '--silent'], { maxBuffer: 64 << 20 });
  const packed = JSON.parse(stdout) as Array<{ filename: string; version: string }>;
  const tarball = packed[0];
  if (!tarball) throw new Error(`npm pack ${spec} printed no file name`);
  const members = manifest.lists.map((list) => `package/dist/filters/declarative/ruleset_${list.rulesetId}/ruleset_${list.rulesetId}.json`);
  await run('tar', ['-xzf', join(work, tarball.filename), '-C', work, ...members]);
  const texts = new Map<string, string>();
  for (const [index, list] of manifest.lists.entries()) {
    const ruleset = JSON.parse(await readFile(join(work, members[index]!), 'utf8')) as unknown;
    const raw = rawListOf(ruleset);
    if (!raw) throw new Error(`${members[index]} has no rawFilterList: the package format changed; use --source web`);
    texts.set(list.file, raw);
  }
  return { texts, packageVersion: tarball.version };
}

async function fromWeb(manifest: Manifest): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const list of manifest.lists) {
    console.log(`GET ${list.url} …`);
    const response = await fetch(list.url, { signal: AbortSignal.timeout(60_000) });
    if (!response.ok) throw new Error(`${list.url} answered ${response.status}`);
    texts.set(list.file, await response.text());
  }
  return texts;
}

function header(text: string, name: string): string {
  const match = new RegExp(`^! ${name}:\\s*(.+)$`, 'm').exec(text.slice(0, 4_000));
  return match?.[1]?.trim() ?? '';
}

function normalise(text: string): string {
  const unix = text.replace(/\r\n?/g, '\n');
  return unix.endsWith('\n') ? unix : `${unix}\n`;
}

async function main(): Promise<void> {
  const { source, version } = parseArgs(process.argv.slice(2));
  const manifest = JSON.parse(await readFile(MANIFEST, 'utf8')) as Manifest;
  const work = await mkdtemp(join(tmpdir(), 'daguerre-filter-lists-'));
  try {
    let texts: Map<string, string>;
    if (source === 'npm') {
      const fetched = await fromNpm(manifest, version, work);
      texts = fetched.texts;
      manifest.package.version = fetched.packageVersion;
    } else {
      texts = await fromWeb(manifest);
    }

    // Check every list before writing any, so a bad download changes nothing.
    const checked = manifest.lists.map((list) => {
      const text = normalise(texts.get(list.file) ?? '');
      const rules = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('!') && !line.startsWith('[')).length;
      if (rules < MIN_RULES) throw new Error(`${list.file}: only ${rules} rules: refusing to write it`);
      const title = header(text, 'Title');
      if (title && title !== list.title) console.warn(`  note: ${list.file} is titled "${title}" (manifest says "${list.title}")`);
      return { list, text, rules };
    });
    for (const { list, text, rules } of checked) {
      const target = join(LIST_DIR, list.file);
      await writeFile(`${target}.tmp`, text);
      await rename(`${target}.tmp`, target);
      const previous = list.sha256;
      list.version = header(text, 'Version');
      list.updated = header(text, 'TimeUpdated') || header(text, 'Last modified');
      list.sha256 = createHash('sha256').update(text).digest('hex');
      const change = previous === list.sha256 ? 'unchanged' : 'updated';
      console.log(`  ${list.file}: ${change}, ${rules} rules, version ${list.version || '?'} of ${list.updated || '?'}`);
    }
    await writeFile(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(
      `Wrote ${checked.length} lists to ${LIST_DIR}${source === 'npm' ? ` (from ${manifest.package.name}@${manifest.package.version})` : ''}.`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(`filters:update failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
