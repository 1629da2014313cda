import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../server/src/errors.js';
import { loadServerKey, SERVER_KEY_FILE_NAME } from '../../server/src/security/server-key.js';
import { rawQueryOf, signatureMatches, signQuery, splitSignedQuery } from '../../server/src/security/signing.js';
import { SigningSecrets } from '../../server/src/services/signing-secrets.js';
import type { ApiKeyRepository } from '../../server/src/store/api-key-repository.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'daguerre-signing-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('signing', () => {
  it('signs the raw query with HMAC-SHA256 hex and splits off a last, lowercase signature only', () => {
    const query = 'url=https%3A%2F%2Fexample.com&keyId=k&expires=99';
    const signature = signQuery('secret', query);
    expect(signature).toBe(createHmac('sha256', 'secret').update(query).digest('hex'));
    expect(splitSignedQuery(`${query}&signature=${signature}`)).toEqual({ signed: query, signature });
    expect(splitSignedQuery(`${query}&signature=${signature}&x=1`)).toBeUndefined();
    expect(splitSignedQuery(`${query}&signature=${signature.toUpperCase()}`)).toBeUndefined();
    expect(splitSignedQuery(`signature=${signature}`)).toBeUndefined();
    expect(signatureMatches('secret', { signed: query, signature })).toBe(true);
    expect(signatureMatches('other', { signed: query, signature })).toBe(false);
    expect(rawQueryOf('/capture?a=1%202&b=+#frag')).toBe('a=1%202&b=+');
    expect(rawQueryOf('/capture')).toBe('');
  });

  it('creates the server key once in the data folder, owner-only, and prefers SIGNING_SECRETS_KEY', () => {
    const dir = tempDir();
    const url = `sqlite:${join(dir, 'db.sqlite')}`;
    const first = loadServerKey(undefined, url);
    const file = join(dir, SERVER_KEY_FILE_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadServerKey(undefined, url).equals(first)).toBe(true);
    chmodSync(file, 0o644);
    loadServerKey(undefined, url);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const fromEnv = randomBytes(32);
    expect(loadServerKey(fromEnv.toString('hex'), url).equals(fromEnv)).toBe(true);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.toString('hex'));
    writeFileSync(file, 'garbage');
    expect(() => loadServerKey(undefined, url)).toThrow(/does not hold a 32-byte key/);
  });

  it('seals a secret bound to its key id; another server key or another row cannot open it', () => {
    const keys = {} as ApiKeyRepository;
    const secrets = new SigningSecrets(keys, randomBytes(32));
    const { secret, sealed } = secrets.issue('key-1');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(sealed).not.toContain(secret.slice(4));
    expect(secrets.open('key-1', sealed)).toBe(secret);
    expect(() => secrets.open('key-2', sealed)).toThrow(ApiError);
    expect(() => new SigningSecrets(keys, randomBytes(32)).open('key-1', sealed)).toThrow(/signed link could not be checked/);
  });
});
