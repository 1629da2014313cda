import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { packageFile, RUNS_FROM_SOURCE } from '../package-files.js';

/**
 * The dashboard's script is written in TypeScript (browser/) and served as one bundled file,
 * public/dashboard/dashboard.js, made by scripts/build-dashboard.mjs (docs/development.md, "The
 * dashboard's script"). An installed package and the image ship it made. A checkout makes it here
 * when it is missing or older than its sources, so that a clone's first `serve` and an edit of the
 * sources show the page as its sources say, with no step to remember.
 */

const SCRIPT = packageFile('public', 'dashboard', 'dashboard.js');
const SOURCES = packageFile('src', 'dashboard', 'browser');
const BUILD = packageFile('scripts', 'build-dashboard.mjs');

export function ensureDashboardScript(logger: Logger): void {
  if (!RUNS_FROM_SOURCE) {
    if (!existsSync(SCRIPT)) throw new Error(`The dashboard's script ${SCRIPT} is missing from the package: install it again.`);
    return;
  }
  if (existsSync(SCRIPT) && statSync(SCRIPT).mtimeMs >= newestSource()) return;
  try {
    execFileSync(process.execPath, [BUILD], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const detail = String((error as { stderr?: Buffer }).stderr ?? error).trim();
    // A checkout the service's user cannot write to (deploy/daguerre.service) keeps the file setup made.
    if (!existsSync(SCRIPT)) {
      throw new Error(`The dashboard's script ${SCRIPT} is missing and could not be built: run \`npm run setup\` (${detail})`);
    }
    logger.warn({ detail }, `dashboard: ${SCRIPT} is older than its sources and could not be rebuilt`);
  }
}

/** The newest change to the script's sources and its build script, in ms since the epoch. */
function newestSource(): number {
  const files = readdirSync(SOURCES, { recursive: true, encoding: 'utf8' }).map((name) => join(SOURCES, name));
  return Math.max(statSync(BUILD).mtimeMs, ...files.map((file) => statSync(file).mtimeMs));
}
