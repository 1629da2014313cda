import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  // ESM for `import`, CommonJS for `require` (package.json "exports"), each with its own declarations.
  format: ['esm', 'cjs'],
  target: 'node20',
  platform: 'node',
  clean: true,
  tsconfig: 'tsconfig.build.json',
  // The contract is a private workspace package whose entry is TypeScript source: bundle it so the
  // published tarball needs only @ts-rest/core and zod, its real dependencies.
  // standardwebhooks (the webhook verifier) is small and bundled too, so the tarball stays offline-installable.
  noExternal: ['@daguerre/contract', 'standardwebhooks', '@stablelib/base64', 'fast-sha256'],
  external: ['@ts-rest/core', 'zod'],
  // Contract types are inlined into dist/index.d.ts too: tsconfig.build.json maps the package to its
  // source outside node_modules, which the declaration bundler would otherwise keep external.
  dts: true,
});
