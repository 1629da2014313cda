import { mkdirSync, writeFileSync } from 'node:fs';
import { generatedDocs } from './docs/generated-docs.js';

/** `npm run docs`: writes the generated pages of docs/ (a test fails when the committed ones are stale). */
for (const page of generatedDocs()) {
  const target = new URL(`../${page.path}`, import.meta.url);
  mkdirSync(new URL('.', target), { recursive: true });
  writeFileSync(target, page.text);
  console.log(`wrote ${page.path}`);
}
