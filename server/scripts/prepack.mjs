// `npm pack` / `npm publish` of the server: builds the bundle and copies what the package carries
// from the repository (the OpenAPI document, the license). Removed again by postpack.mjs, so the
// checkout keeps one copy of each.
import { execFileSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';

execFileSync('npx', ['tsup', '--config', 'tsup.config.ts'], { stdio: ['ignore', 'ignore', 'inherit'] });
copyFileSync('../openapi.json', 'openapi.json');
