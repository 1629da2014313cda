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
  noExternal: ['@rendershot/contract'],
  external: ['@ts-rest/core', 'zod'],
  // Contract types are inlined into dist/index.d.ts too: tsconfig.build.json maps the package to its
  // source outside node_modules, which the declaration bundler would otherwise keep external.
  dts: true,
});
