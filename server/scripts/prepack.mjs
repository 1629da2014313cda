// `npm pack` / `npm publish` of the server: builds the bundle and the dashboard's script, and copies
// the OpenAPI document from the repository's root into the package. Removed again by postpack.mjs, so
// the checkout keeps one copy.
import { execFileSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import process from 'node:process';

execFileSync('npx', ['tsup', '--config', 'tsup.config.ts'], { stdio: ['ignore', 'ignore', 'inherit'] });
// The dashboard's script, bundled from its TypeScript sources (the package has no src/ to build it from).
execFileSync(process.execPath, ['scripts/build-dashboard.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] });
copyFileSync('../openapi.json', 'openapi.json');
// The filter engines in their serialized form (filter-lists/prepared): an installed service loads
// them at its start instead of parsing the lists (server/src/capture/page/content-filters/engines.ts).
execFileSync(process.execPath, ['dist/cli.js', 'filters', 'prepare'], { stdio: ['ignore', 'ignore', 'inherit'] });
