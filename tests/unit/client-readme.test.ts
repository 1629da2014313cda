import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../client/src/index.js';

const README = readFileSync(new URL('../../client/README.md', import.meta.url), 'utf8');
const codeBlocks = [...README.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!).join('\n');

describe("the SDK's README", () => {
  it('documents every method of the client with a heading and a code example that calls it', () => {
    const methods = Object.keys(sdk.createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' }));
    expect(methods.length).toBeGreaterThanOrEqual(9);
    for (const method of methods) {
      expect(README, method).toMatch(new RegExp(`^### \`${method}[(\`]`, 'm'));
      expect(codeBlocks, method).toMatch(new RegExp(`client\\.${method}\\b`));
    }
  });

  it('documents every exported function and error class, and the classes are exported', () => {
    for (const name of ['createClient', 'verifyWebhook', 'DaguerreError', 'WaitTimeoutError', 'WebhookVerificationError']) {
      expect(typeof (sdk as Record<string, unknown>)[name], name).toBe('function');
      expect(README, name).toContain(`\`${name}`);
    }
  });
});
