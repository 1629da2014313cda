// The copies prepack.mjs made for the tarball: the checkout reads the repository's own, and makes
// its own filter-engine cache at its first start.
import { rmSync } from 'node:fs';

rmSync('openapi.json', { force: true });
rmSync('filter-lists/prepared', { recursive: true, force: true });
