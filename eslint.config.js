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
  { files: ['**/*.cjs'], languageOptions: { globals: globals.node } },
  { files: ['server/bin/**/*.js'], languageOptions: { globals: globals.node } },
  // Scripts that run in the browser: the dashboard's own JS and the pages the tests serve.
  { files: ['server/public/**/*.js', 'tests/fixtures/**/*.js'], languageOptions: { globals: { ...globals.browser, ...globals.serviceworker } } },
);
