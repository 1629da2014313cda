import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@daguerre/contract';
import { generatedDocs } from '../../scripts/docs/generated-docs.js';
import { ConfigSchema } from '../../server/src/config.js';

const committed = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('generated docs', () => {
  const pages = generatedDocs();

  it.each(pages.map((p) => [p.path, p] as const))(
    '%s is what `npm run docs` generates (regenerate and commit when this fails)',
    (_path, page) => {
      expect(committed(page.path)).toBe(page.text);
    },
  );

  it('the API reference lists every query parameter of GET /capture and every error code', () => {
    const api = pages.find((p) => p.path === 'docs/reference/api.md')!.text;
    const capture = api.slice(api.indexOf('## GET /capture'), api.indexOf('## POST /capture'));
    for (const name of ['url', 'html', 'format', 'viewportWidth', 'fullPageScrollDuration', 'cacheTtl', 'signature'])
      expect(capture).toContain(`| \`${name}\``);
    expect(capture).toMatch(/\| `imageQuality` \| query \| number \| `90` \| 1 to 100 \|/);
    for (const code of ERROR_CODES) expect(api).toMatch(new RegExp(`\\| \`${code}\` \\| \\d{3} \\|`));
    // Every parameter and body field has an example (the column before the description).
    const rows = api.split('\n').filter((line) => /^\| `[^`]+`/.test(line) && !/^\| `[A-Z_]+` \| \d{3} \|/.test(line));
    expect(rows.length).toBeGreaterThan(150);
    for (const row of rows) expect(row.split(' | ').at(-2), row).toMatch(/`.+`/);
  });

  it('the configuration reference lists every environment variable with its default and range', () => {
    const configuration = pages.find((p) => p.path === 'docs/reference/configuration.md')!.text;
    for (const name of Object.keys(ConfigSchema.shape)) expect(configuration).toContain(`| \`${name}\` |`);
    expect(configuration).toContain('| `CAPTURE_TIMEOUT_MS` | `30000` | whole number 1000 to 600000 |');
    expect(configuration).toContain('| `LOG_LEVEL` | `info` | one of `fatal`');
  });
});
