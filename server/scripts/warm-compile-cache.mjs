// Run once when the image is built, with NODE_COMPILE_CACHE set (Node 22.1 and later): loads every
// module of the bundle and its dependencies, so that V8's compiled code for them is on disk and a
// new container's `daguerre serve` or `worker` reads it instead of compiling (docs/scaling.md,
// "Cold start"). https://nodejs.org/api/module.html#module-compile-cache
import { readdirSync } from 'node:fs';
import module from 'node:module';
import { URL } from 'node:url';

if (!module.getCompileCacheDir?.()) throw new Error('NODE_COMPILE_CACHE is not set, or this Node has no compile cache');
const dist = new URL('../dist/', import.meta.url);
// cli.js runs the command line when loaded; every other chunk only defines things.
for (const file of readdirSync(dist)) {
  if (file.endsWith('.js') && file !== 'cli.js') await import(new URL(file, dist).href);
}
module.flushCompileCache();
