import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../client/src/index.js';
import { equivalentSignedForms, generateSigningSecret, signatureMatches, signQuery } from '../../server/src/security/signing.js';
import { webhookHeaders } from '../../server/src/security/webhook-signature.js';

const body = JSON.stringify({ type: 'capture.succeeded', data: { jobId: '6f1c7a52-8c1e-4a6e-9d4a-0f6a3b2c1d0e', status: 'succeeded' } });

describe('webhook signing secrets in the Standard Webhooks form', () => {
  it('are whsec_ + base64 of 32 bytes, and a receiver verifies with new Webhook(secret) as it is', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const headers = webhookHeaders(secret, 'msg_1', body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(verifyWebhook(secret, body, headers)).toEqual(JSON.parse(body));
    // Another secret's receiver refuses it, with the error class the SDK exports.
    expect(() => new Webhook(generateSigningSecret()).verify(body, headers)).toThrow(LibraryVerificationError);
    expect(() => verifyWebhook(generateSigningSecret(), body, headers)).toThrow(WebhookVerificationError);
  });

  it('keep signing with an older rss_ secret as before (raw UTF-8 key), so existing receivers keep working', () => {
    const legacy = 'rss_7DfGk2m0Q3Xz9bq6H5JtV8wLcR1nYpA4sE0uI9oK2aM';
    const headers = webhookHeaders(legacy, 'msg_2', body);
    expect(new Webhook(legacy, { format: 'raw' }).verify(body, headers)).toEqual(JSON.parse(body));
    expect(verifyWebhook(legacy, body, headers)).toEqual(JSON.parse(body));
    expect(() => verifyWebhook(legacy, body.replace('succeeded', 'failed'), headers)).toThrow(WebhookVerificationError);
  });
});

describe('signed links whose query a browser re-encodes', () => {
  it("match when signed over ' (encodeURIComponent) and sent as %27 (fetch, <img src>)", () => {
    const secret = generateSigningSecret();
    const signedOver = "html=%3Ch1%3EIt's%3C%2Fh1%3E&keyId=k1";
    const sentAs = signedOver.replace("'", '%27');
    expect(equivalentSignedForms(sentAs).slice(0, 2)).toEqual([sentAs, signedOver]);
    expect(signatureMatches(secret, { signed: sentAs, signature: signQuery(secret, signedOver) })).toBe(true);
    expect(signatureMatches(secret, { signed: sentAs, signature: signQuery(secret, sentAs) })).toBe(true);
    expect(signatureMatches(secret, { signed: sentAs.replace('h1', 'h2'), signature: signQuery(secret, signedOver) })).toBe(false);
  });

  it('match when signed in the URLSearchParams form and a proxy re-encodes the query (%20 → +, %2C → ,)', () => {
    const secret = generateSigningSecret();
    const signedOver = new URLSearchParams({ html: '<p>a b</p>', removeSelectors: '.x,.y', keyId: 'k1' }).toString();
    const reEncoded = 'html=%3Cp%3Ea%20b%3C%2Fp%3E&removeSelectors=.x,.y&keyId=k1';
    expect(signatureMatches(secret, { signed: reEncoded, signature: signQuery(secret, signedOver) })).toBe(true);
    // Other values are another link.
    expect(signatureMatches(secret, { signed: reEncoded.replace('a%20b', 'a%20c'), signature: signQuery(secret, signedOver) })).toBe(false);
  });
});
