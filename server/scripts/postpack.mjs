// The copies prepack.mjs made for the tarball: the checkout reads the repository's own.
import { rmSync } from 'node:fs';

rmSync('openapi.json', { force: true });
