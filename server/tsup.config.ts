import { defineConfig } from 'tsup';

/**
 * The installed package's bundle (docs/install.md): the CLI and everything it loads, in dist/. The
 * workspace packages it imports (the contract and the client's SDK, which the MCP face talks
 * through) are bundled, so the tarball needs nothing but its registry dependencies; those stay
 * external and are installed by npm. A checkout never runs this bundle: bin/daguerre.js runs the
 * sources there.
 */
export default defineConfig({
  entry: { cli: 'src/cli/main.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  // The admin commands load no browser, queue or HTTP code: `serve` and `worker` import them lazily.
  splitting: true,
  sourcemap: true,
  clean: true,
  outDir: 'dist',
  noExternal: ['@daguerre/contract', '@daguerre/client'],
  esbuildOptions(options) {
    // The client's sources, as in the checkout (client/package.json "exports").
    options.conditions = ['daguerre-source'];
  },
});
