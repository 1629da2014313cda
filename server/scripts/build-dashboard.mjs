// Bundles the dashboard's browser script, written in TypeScript in src/dashboard/browser/ (one
// module per page and job), into public/dashboard/dashboard.js, the file the dashboard serves
// (docs/development.md, "The dashboard's script"). Run by scripts/setup.sh, by prepack.mjs for the
// tarball, by deploy/Dockerfile for the image, and by a checkout's server when the file is missing
// or older than its sources (src/dashboard/script-asset.ts). The file is written whole under a
// temporary name and then renamed, so a server reading it never sees half of it.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const serverDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const sources = join(serverDir, 'src', 'dashboard', 'browser');
const outFile = join(serverDir, 'public', 'dashboard', 'dashboard.js');

const result = await build({
  // The same file from any working directory (its comments name each module from here).
  absWorkingDir: serverDir,
  entryPoints: [join(sources, 'main.ts')],
  tsconfig: join(sources, 'tsconfig.json'),
  bundle: true,
  // One classic script (<script defer>, views/layout.ts): its modules share a scope of their own.
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  charset: 'utf8',
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
  banner: {
    js: '// Daguerre dashboard: built from server/src/dashboard/browser/ by server/scripts/build-dashboard.mjs. Do not edit.',
  },
});
mkdirSync(dirname(outFile), { recursive: true });
const temporary = `${outFile}.${process.pid}.tmp`;
writeFileSync(temporary, result.outputFiles[0].contents);
renameSync(temporary, outFile);
