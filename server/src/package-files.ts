import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Files the server reads at run time (its package.json, the filter lists, the dashboard's assets,
 * the Chromium wrapper, the OpenAPI document), found from the package's root. The same code runs
 * two ways: from `server/src` in a checkout (through tsx) and from the bundle in `dist/` of an
 * installed package (docs/install.md), so no file may count `../` from its own place.
 */
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** A checkout runs the sources; an installed package has only the bundle. */
export const RUNS_FROM_SOURCE = existsSync(join(PACKAGE_ROOT, 'src'));

export function packageFile(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}

/**
 * openapi.json: the repository's root holds the generated document (checked by a test); the packed
 * package carries a copy of it, made when it is packed (server/scripts/prepack.mjs).
 */
export function openApiDocumentPath(): string {
  return RUNS_FROM_SOURCE ? join(PACKAGE_ROOT, '..', 'openapi.json') : packageFile('openapi.json');
}
