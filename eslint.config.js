import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'data/**', 'coverage/**', '.bench/**', '.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Type-aware rules for the TypeScript that tsconfig.json covers: a promise nobody awaits loses its
  // error. A deliberate fire-and-forget says so with `void` and a comment, or ignores its error by
  // name (server/src/ignore-error.ts). See typescript-eslint.io/getting-started/typed-linting.
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // An await on something that is not a promise hides a missing call or a sync API taken for async.
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  // Files without type information: plain JS and the build configs outside tsconfig.json.
  { files: ['**/*.{js,cjs,mjs}', 'client/tsup.config.ts', 'server/tsup.config.ts'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.cjs'], languageOptions: { globals: globals.node } },
  { files: ['server/bin/**/*.js'], languageOptions: { globals: globals.node } },
  // Scripts that run in the browser: the dashboard's (TypeScript in server/src/dashboard/browser, with
  // its own tsconfig.json; the bundle made from it is left out) and the pages the tests serve.
  { ignores: ['server/public/dashboard/dashboard.js'] },
  {
    files: ['server/src/dashboard/browser/**/*.ts', 'tests/fixtures/**/*.js'],
    languageOptions: { globals: { ...globals.browser, ...globals.serviceworker } },
  },
);
