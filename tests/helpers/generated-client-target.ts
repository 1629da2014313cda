import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { FixtureServer } from './fixture-server.js';
import { deleteKeysWithPrefix } from './redis-keys.js';
import { exec, REPO_ROOT } from './temp-project.js';
import { startTestService, type TestService } from './test-service.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * What the programs built on a generated client call (tests/integration/generated-client-*.test.ts):
 * a live service with Redis for async and bulk captures, and a page whose stylesheet and image a list
 * parameter (`blockResources=stylesheet,image`) keeps from loading.
 */
export interface GeneratedClientTarget {
  service: TestService;
  fixtures: FixtureServer;
  /** A temp folder for the generated projects. */
  work: string;
  /** The page the list parameter is tried on. */
  listTarget: string;
  stop(): Promise<void>;
}

export async function startGeneratedClientTarget(name: string): Promise<GeneratedClientTarget> {
  const prefix = `rs-test-${name}-${randomBytes(4).toString('hex')}`;
  const fixtures = await new FixtureServer().start();
  fixtures.page('/listed.html', '<html><head><link rel="stylesheet" href="/listed.css"></head><body><img src="/listed.png"></body></html>');
  fixtures.page('/listed.css', 'body { background: red }', { 'content-type': 'text/css' });
  const service = await startTestService({ env: { RATE_LIMIT_MAX: '1000', REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1' } });
  const work = await mkdtemp(join(tmpdir(), `daguerre-${name}-`));
  return {
    service,
    fixtures,
    work,
    listTarget: `${fixtures.url}/listed.html`,
    async stop() {
      await service.stop();
      await fixtures.stop();
      await rm(work, { recursive: true, force: true });
      await deleteKeysWithPrefix(REDIS_URL, prefix);
    },
  };
}

/** A Node binary of that line (scripts/node-line.sh): orval and @hey-api/openapi-ts need Node >= 22.18. */
export async function nodeLine(major: 22 | 24): Promise<string> {
  const { stdout } = await exec('bash', [join(REPO_ROOT, 'scripts', 'node-line.sh'), String(major)], { timeout: 180_000 });
  return stdout.trim();
}

/**
 * The calls every program makes, one step each, and what it prints: the names of the steps that
 * threw (`failed`), and what the others saw. A step fails when an answer is not what the
 * operation's types say it is (a Blob where JSON was typed), so a generator's runtime is judged,
 * not only its types.
 */
export const PROGRAM_STEPS = `
const failed: string[] = [];
const seen: Record<string, unknown> = {};
async function step(name: string, run: () => Promise<unknown>): Promise<void> {
  try {
    seen[name] = await run();
  } catch (error) {
    failed.push(name);
    console.error(name + ': ' + (error instanceof Error ? error.message : String(error)));
  }
}
const head = async (blob: Blob) => Array.from(new Uint8Array(await blob.arrayBuffer()).subarray(0, 4));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
`;

export interface ProgramOutput {
  failed: string[];
  seen: Record<string, unknown>;
}

/** Runs a compiled program against the target; it prints one JSON line. */
export async function runProgram(target: GeneratedClientTarget, script: string): Promise<ProgramOutput> {
  const { stdout } = await exec('node', [script, target.service.url, target.service.apiKey, target.listTarget], { timeout: 120_000 });
  return JSON.parse(stdout.trim()) as ProgramOutput;
}

const PNG = [0x89, 0x50, 0x4e, 0x47];

/** What every step sees against the live service when the client works. */
export function expectEveryStepWorked(output: ProgramOutput, target: GeneratedClientTarget): void {
  expect(output.failed).toEqual([]);
  expect(output.seen).toMatchObject({
    file: { status: 200, type: 'image/png', head: PNG },
    json: { success: true, mime: 'image/png' },
    list: { status: 200, head: PNG },
    posted: { success: true, fileName: expect.stringMatching(/\.png$/) },
    usage: { used: expect.any(Number) },
    job: { accepted: 202, status: 'succeeded', head: PNG },
    batch: { accepted: 202, total: 2, status: 'completed', succeeded: 2 },
    refused: { status: 400, code: 'VALIDATION_ERROR', fields: ['viewportWidth'] },
  });
  // Both entries of the list reached the server: neither the stylesheet nor the image was fetched.
  expect(target.fixtures.requestsTo('/listed.html')).toHaveLength(1);
  expect(target.fixtures.requestsTo('/listed.css')).toHaveLength(0);
  expect(target.fixtures.requestsTo('/listed.png')).toHaveLength(0);
}
