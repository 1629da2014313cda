/**
 * browserless, the self-hosted service our users run today, as a third contender of the page set
 * (the judged run puts the service beside browserless 2.42 and a kept page on the headless shell,
 * alternating). Its npm package (@browserless.io/browserless, the code of its Docker images) is
 * installed on first use into a cache outside the repository, not as a dependency: the suite and
 * the service never need it. BENCH_BROWSERLESS=0 leaves it out; BENCH_BROWSERLESS_DIR puts the cache
 * elsewhere (a folder of its own for the version inside it).
 *
 * How it runs here, as close to its `ghcr.io/browserless/chromium` image as this machine allows:
 * - its own server (`build/index.js`) with its defaults, but for the address, the port and a token;
 * - only its chromium and management routes (ROUTES): it refuses to start while a route's browser
 *   (Chrome, Edge, Firefox, WebKit) is missing, and the image ships Chromium only;
 * - its Chromium is where playwright-core looks for it (PLAYWRIGHT_BROWSERS_PATH), a link to Debian's
 *   full Chromium: the image ships Playwright's Chromium build, the full browser too, and nothing
 *   but the npm registry is reachable here. It launches it with its own flags (`--no-sandbox`);
 * - a capture is its `POST /chromium/screenshot`, which starts a browser for the request and closes
 *   it after, as the image does by default. The package asks for Node 24; it runs on Node 20 here.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { FULL_CHROMIUM } from '../../server/src/chromium-binaries.js';
import { badImage, type Contender, type Shot } from './page-set-shots.js';
import { allProcesses, type ProcInfo } from './proc-mem.js';
import { freePort, killAll, portOpen, stopChildTree } from './service.js';
import { VIEWPORT } from './baselines.js';
import { nowMs, sleep } from './stats.js';

const run = promisify(execFile);

export const BROWSERLESS_VERSION = '2.42.0';
const PACKAGE = '@browserless.io/browserless';
/** Debian's full Chromium binary (the /usr/bin/chromium script runs it). */
const CHROMIUM_BINARY = FULL_CHROMIUM === '/usr/bin/chromium' ? '/usr/lib/chromium/chromium' : FULL_CHROMIUM;
const TOKEN = 'bench';

/** The install's folder: a folder of its own for this version, under BENCH_BROWSERLESS_DIR or the user's cache. */
function cacheDir(): string {
  return join(process.env.BENCH_BROWSERLESS_DIR || join(homedir(), '.cache', 'daguerre-bench'), `browserless-${BROWSERLESS_VERSION}`);
}

/** The version of the package installed in `packageDir`, if any. */
function installedVersion(packageDir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * The package's folder, installed from the npm registry on first use (about 600 MB, 30 s). A
 * marker written after a whole install tells it from one cut short; another version is replaced.
 */
async function installed(dir: string): Promise<string> {
  const packageDir = join(dir, 'node_modules', ...PACKAGE.split('/'));
  const marker = join(dir, 'installed');
  if (existsSync(marker) && installedVersion(packageDir) === BROWSERLESS_VERSION) return packageDir;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--no-save', `${PACKAGE}@${BROWSERLESS_VERSION}`], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 600_000,
  });
  const version = installedVersion(packageDir);
  if (version !== BROWSERLESS_VERSION || !existsSync(join(packageDir, 'build', 'index.js')))
    throw new Error(`npm install of ${PACKAGE}@${BROWSERLESS_VERSION} left ${version ?? 'no package'} in ${dir}`);
  await writeFile(marker, `${BROWSERLESS_VERSION}\n`);
  return packageDir;
}

/** A process by its pid and start time (a pid alone can be reused). */
type ProcessId = `${number}:${number}`;
const idOf = (p: ProcInfo): ProcessId => `${p.pid}:${p.startTime}`;

/** Whether `pid` runs Debian's full Chromium (a zombie, or another user's process, has no readable exe). */
function runsFullChromium(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === CHROMIUM_BINARY;
  } catch {
    return false;
  }
}

/**
 * Every process of Debian's full Chromium, which browserless runs here (the service and the floor
 * run the headless shell), but for those in `before` (there before browserless started: another
 * user's browser). When a browser exits, its helpers are adopted by init and leave browserless's
 * process tree: this finds them by their binary.
 */
export function fullChromiumProcesses(before: ReadonlySet<ProcessId> = new Set()): ProcInfo[] {
  return allProcesses().filter((p) => !before.has(idOf(p)) && runsFullChromium(p.pid));
}

/** Where its playwright-core looks for Chromium under `browsersPath` (the revision is playwright-core's). */
async function chromiumPathOf(packageDir: string, browsersPath: string): Promise<string> {
  const script = `const r=require('node:module').createRequire(${JSON.stringify(join(packageDir, 'package.json'))});console.log(r('playwright-core').chromium.executablePath())`;
  const { stdout } = await run(process.execPath, ['-e', script], { env: { ...process.env, PLAYWRIGHT_BROWSERS_PATH: browsersPath } });
  return stdout.trim();
}

/** Links `link` to `target`, replacing what was there. */
async function linkTo(target: string, link: string): Promise<void> {
  await mkdir(dirname(link), { recursive: true });
  await rm(link, { force: true, recursive: true });
  await symlink(target, link);
}

export interface BrowserlessHandle {
  pid: number;
  /** Profile folders left in its DATA_DIR before it started (by an earlier run that was killed): not its to wait for. */
  profilesBefore: ReadonlySet<string>;
  /** Full Chromium processes that ran before it started: not its to wait for. */
  chromiumBefore: ReadonlySet<ProcessId>;
  origin: string;
  version: string;
  stop(): Promise<void>;
}

export async function startBrowserless(): Promise<BrowserlessHandle> {
  if (!existsSync(CHROMIUM_BINARY))
    throw new Error(`${CHROMIUM_BINARY} is missing (Debian package chromium, installed by scripts/setup.sh)`);
  const dir = cacheDir();
  const packageDir = await installed(dir);
  const browsersPath = join(dir, 'browsers');
  await linkTo(CHROMIUM_BINARY, await chromiumPathOf(packageDir, browsersPath));
  // It reads its package.json and node_modules/playwright-core from the working directory, as in
  // its image, where that is the package's folder with its dependencies: a folder of links to both.
  const workDir = join(dir, 'run');
  await linkTo(join(packageDir, 'package.json'), join(workDir, 'package.json'));
  await linkTo(join(dir, 'node_modules'), join(workDir, 'node_modules'));
  const routes = join(dir, 'routes');
  for (const name of ['chromium', 'management']) await linkTo(join(packageDir, 'build', 'routes', name), join(routes, name));

  const profilesBefore = new Set(profiles());
  const chromiumBefore = new Set(fullChromiumProcesses().map(idOf));
  const port = await freePort();
  const child = spawn(process.execPath, [join(packageDir, 'build', 'index.js')], {
    cwd: workDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(port),
      TOKEN,
      ROUTES: routes,
      PLAYWRIGHT_BROWSERS_PATH: browsersPath,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its log goes nowhere, as into a container's log driver; the last lines are kept for errors.
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(...chunk.toString('utf8').split('\n'));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let spawnError: Error | undefined;
  child.once('error', (e) => {
    spawnError = e;
  });
  const stop = async () => {
    await stopChildTree(child, child.pid);
    // Helpers of its browsers that init adopted are out of its tree: they go too.
    killAll(fullChromiumProcesses(chromiumBefore));
  };
  try {
    const start = nowMs();
    // Bounded: 60 s at most.
    while (!(await portOpen(port))) {
      if (spawnError) throw new Error(`browserless could not start: ${spawnError.message}`);
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`browserless stopped before listening:\n${tail.slice(-12).join('\n')}`);
      if (nowMs() - start > 60_000) throw new Error(`browserless did not listen within 60 s:\n${tail.join('\n')}`);
      await sleep(200);
    }
    return {
      pid: child.pid!,
      profilesBefore,
      chromiumBefore,
      origin: `http://127.0.0.1:${port}`,
      version: `browserless ${BROWSERLESS_VERSION}`,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Where browserless puts a profile folder for each request's browser (its default DATA_DIR). */
const PROFILES_DIR = join(tmpdir(), 'browserless-data-dirs');
function profiles(): string[] {
  try {
    return readdirSync(PROFILES_DIR);
  } catch {
    return [];
  }
}

/** A capture is one `POST /chromium/screenshot`: goto(load) and its screenshot, in a browser of its own. */
export function browserlessContender(handle: BrowserlessHandle, fixtureOrigin: string, lossyQuality: number): Contender {
  return {
    name: 'browserless',
    pid: handle.pid,
    async shot(page, format): Promise<Shot> {
      const start = nowMs();
      const body = {
        url: `${fixtureOrigin}${page.path}`,
        gotoOptions: { waitUntil: 'load' },
        viewport: VIEWPORT,
        options: { type: format, fullPage: page.fullPage, ...(format === 'png' ? {} : { quality: lossyQuality }) },
      };
      try {
        const res = await fetch(`${handle.origin}/chromium/screenshot?token=${TOKEN}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(120_000),
        });
        const bytes = new Uint8Array(await res.arrayBuffer());
        const error =
          res.status !== 200
            ? `HTTP ${res.status} ${Buffer.from(bytes.subarray(0, 200)).toString('utf8')}`
            : badImage(bytes, format, page.fullPage);
        return { ok: error === undefined, ms: nowMs() - start, bytes, error };
      } catch (e) {
        return { ok: false, ms: nowMs() - start, bytes: new Uint8Array(), error: e instanceof Error ? e.message : String(e) };
      }
    },
    // It answers before it closes the request's browser and deletes its profile folder: the next
    // contender's turn waits until every process of that browser is gone (its helpers too, which
    // init adopts: fullChromiumProcesses) and the folder with them. Past 15 s it says so and the
    // run goes on: browserless is a comparison, not a target.
    async settle() {
      const busy = () =>
        fullChromiumProcesses(handle.chromiumBefore).length > 0 || profiles().some((name) => !handle.profilesBefore.has(name));
      // Bounded: 15 s at most.
      for (let i = 0; i < 150 && busy(); i++) await sleep(100);
      if (busy())
        return `browserless: its browsers were still closing 15 s after the answer (${fullChromiumProcesses(handle.chromiumBefore).length} Chromium processes); the next turn went on`;
      return undefined;
    },
  };
}
