import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, createTempProject, exec, REPO_ROOT, withPackLock } from '../helpers/temp-project.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * The published @daguerre/client, as a user gets it: `npm pack`, installed from the tarball into a
 * CommonJS and an ESM project, type-checked under strict, and run against the live service.
 */
const PROGRAM = `import { createHmac } from 'node:crypto';
import {
  createClient, DaguerreError, verifyWebhook, WaitTimeoutError, WebhookVerificationError,
  type BatchWebhookEvent, type BulkCaptureRequest, type CaptureInput, type CaptureWebhookEvent, type DaguerreClient, type WebhookEvent,
  type MonitorWebhookEvent,
} from '@daguerre/client';

const input: CaptureInput = {
  html: '<body style="margin:0;background:rgb(10,120,220)">x</body>',
  format: 'jpeg',
  imageQuality: 80,
  device: 'iphone-15',
  viewportWidth: 320,
  viewportHeight: 200,
  fullPage: false,
  removeSelectors: ['.ad', '#banner'],
  headers: { 'Accept-Language': 'de-DE' },
};
// @ts-expect-error imageQuality is a number
const badQuality: CaptureInput = { html: 'x', imageQuality: 'x' };
// @ts-expect-error device is one of the presets
const badDevice: CaptureInput = { html: 'x', device: 'nokia-3310' };
// @ts-expect-error fullPage is a boolean
const badBoolean: CaptureInput = { html: 'x', fullPage: 'yes' };
// A bulk item and the defaults take the same typed fields.
// @ts-expect-error a misspelt field
const badBulkField: BulkCaptureRequest = { requests: [{ ulr: 'https://example.com' }] };
// @ts-expect-error viewportWidth is a number
const badBulkWidth: BulkCaptureRequest = { requests: [{ html: 'x', viewportWidth: 'wide' }] };
// @ts-expect-error format is one of the formats
const badBulkFormat: BulkCaptureRequest = { defaults: { format: 'bmp' }, requests: [{ html: 'x' }] };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const takesExactly: Same<Parameters<DaguerreClient['capture']>[0], CaptureInput> = true;
const everyEvent: Same<WebhookEvent, CaptureWebhookEvent | BatchWebhookEvent | MonitorWebhookEvent> = true;
void [badQuality, badDevice, badBoolean, badBulkField, badBulkWidth, badBulkFormat, takesExactly, everyEvent];

// Each event the service sends, told apart by its type: data is typed in each branch.
function describeEvent(event: WebhookEvent): string {
  switch (event.type) {
    case 'capture.succeeded':
      return 'capture.succeeded ' + event.data.jobId + ' ' + (event.data.result?.mime ?? '');
    case 'capture.failed':
      return 'capture.failed ' + event.data.jobId + ' ' + (event.data.error?.code ?? '');
    case 'batch.completed':
      return 'batch.completed ' + event.data.batchId + ' ' + event.data.counts.succeeded + '/' + event.data.total;
    case 'batch.cancelled':
      return 'batch.cancelled ' + event.data.batchId + ' ' + event.data.counts.cancelled + '/' + event.data.total;
    case 'monitor.changed':
    case 'monitor.failed':
      return event.type + ' ' + event.data.monitorId + ' ' + (event.data.run?.diff?.diffPercent ?? '');
    case 'monitor.paused':
    case 'monitor.resumed':
      return event.type + ' ' + event.data.monitorId + ' ' + (event.data.reason ?? '');
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}

// Signed as the service signs (Standard Webhooks: HMAC-SHA256 of id.timestamp.body, the secret's bytes as key).
const secretBytes = Buffer.alloc(32, 7);
const secret = 'whsec_' + secretBytes.toString('base64');
function signed(id: string, body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secretBytes).update(id + '.' + timestamp + '.' + body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': 'v1,' + signature };
}
const batch = { batchId: 'b1', status: 'completed', createdAt: '2026-01-01T00:00:00Z', total: 2, counts: { succeeded: 2, failed: 0, queued: 0, running: 0, cancelled: 0 }, creditsCharged: 2, statusUrl: '/captures/bulk/b1', items: [] };
const job = { jobId: 'j1', status: 'failed', createdAt: '2026-01-01T00:00:00Z', creditsCharged: 0, error: { code: 'CAPTURE_TIMEOUT', message: 'late' } };
const events = [
  JSON.stringify({ type: 'batch.completed', data: batch }),
  JSON.stringify({ type: 'batch.cancelled', data: { ...batch, status: 'cancelled', counts: { ...batch.counts, succeeded: 1, cancelled: 1 } } }),
  JSON.stringify({ type: 'capture.failed', data: job }),
  JSON.stringify({ type: 'monitor.paused', timestamp: '2026-01-01T00:00:00Z', data: { monitorId: 'm1', name: 'Home', url: 'https://example.com', reason: 'credits' } }),
].map((body, index) => describeEvent(verifyWebhook(secret, body, signed('msg_' + index, body))));

async function main(): Promise<void> {
  const client = createClient({ baseUrl: process.env.DAGUERRE_URL!, apiKey: process.env.DAGUERRE_KEY! });
  const file = await client.capture(input);
  const usage = await client.usage();
  // The error classes are exported: callers branch with instanceof.
  let refusal = 'none';
  await createClient({ baseUrl: process.env.DAGUERRE_URL!, apiKey: 'rs_wrong' }).usage().catch((error: unknown) => {
    refusal = error instanceof DaguerreError ? error.code : String(error);
  });
  let verification = 'none';
  try {
    verifyWebhook(secret, '{}', { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' });
  } catch (error) {
    verification = error instanceof WebhookVerificationError ? 'WebhookVerificationError' : String(error);
  }
  console.log(JSON.stringify({
    contentType: file.contentType, head: Array.from(file.bytes.subarray(0, 3)), used: usage.credits.usedThisPeriod,
    refusal, verification, waitTimeoutError: new WaitTimeoutError('j', 'active') instanceof Error, events,
  }));
}
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

describe('@daguerre/client packed and installed into CommonJS and ESM projects', () => {
  let service: TestService;
  let work: string;
  let tarballs: string[];

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_MAX: '1000' } });
    work = await mkdtemp(join(tmpdir(), 'daguerre-client-pack-'));
    // The client (prepack builds it) plus its two runtime dependencies from this checkout, so the
    // install needs no registry: the contract is bundled into the client.
    await withPackLock(() =>
      exec('npm', ['pack', '--pack-destination', work, './client', './node_modules/@ts-rest/core', './node_modules/zod'], {
        cwd: REPO_ROOT,
        timeout: 180_000,
      }),
    );
    tarballs = (await readdir(work)).filter((name) => name.endsWith('.tgz')).map((name) => join(work, name));
    expect(tarballs).toHaveLength(3);
  }, 240_000);
  afterAll(async () => {
    await service?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  for (const type of ['commonjs', 'module'] as const) {
    it(`installs, type-checks and captures from a ${type} project`, async () => {
      const dir = join(work, type);
      await createTempProject(dir, type, { 'src/main.ts': PROGRAM });
      await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], { cwd: dir, timeout: 120_000 });
      await compile(dir);
      const compiled = join(dir, 'out', 'main.js');
      // The CommonJS build really is loaded through require() (no ESM-only error).
      if (type === 'commonjs') {
        const probe = await exec('node', ['-e', "console.log(typeof require('@daguerre/client').createClient)"], { cwd: dir });
        expect(probe.stdout.trim()).toBe('function');
      }
      const { stdout } = await exec('node', [compiled], {
        cwd: dir,
        timeout: 60_000,
        env: { ...process.env, DAGUERRE_URL: service.url, DAGUERRE_KEY: service.apiKey },
      });
      const result = JSON.parse(stdout.trim()) as {
        contentType: string;
        head: number[];
        used: number;
        refusal: string;
        verification: string;
        waitTimeoutError: boolean;
        events: string[];
      };
      expect(result).toMatchObject({ refusal: 'INVALID_API_KEY', verification: 'WebhookVerificationError', waitTimeoutError: true });
      expect(result.events).toEqual([
        'batch.completed b1 2/2',
        'batch.cancelled b1 1/2',
        'capture.failed j1 CAPTURE_TIMEOUT',
        'monitor.paused m1 credits',
      ]);
      expect(result.contentType).toBe('image/jpeg');
      expect(result.head).toEqual([0xff, 0xd8, 0xff]);
      expect(result.used).toBeGreaterThanOrEqual(1);
    }, 180_000);
  }
});
