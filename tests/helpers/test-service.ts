import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createClient, type DaguerreClient } from '../../client/src/index.js';
import { loadConfig, type Config } from '../../server/src/config.js';
import { createLogger } from '../../server/src/logger.js';
import { startRuntime, type Runtime } from '../../server/src/runtime.js';
import type { Resolver } from '../../server/src/security/resolver.js';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.js';
import { onFixtureServerStarted, startedFixtureAddresses } from './fixture-server.js';

/** Every log line the services of the suite write, so a test can look for leaked secrets. */
export const capturedLogLines: string[] = [];

export interface TestService {
  runtime: Runtime;
  url: string;
  database: TestDatabase;
  organizationId: string;
  apiKey: string;
  client: DaguerreClient;
  /** A client for another key (tests of auth and isolation). */
  clientFor(apiKey: string): DaguerreClient;
  /** Raw GET on the service, for status/header/body assertions the typed client hides. */
  get(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  database?: DatabaseKind;
  /** An existing database to share (two instances on one MariaDB). */
  databaseUrl?: string;
  credits?: number;
  env?: Partial<Record<keyof Config, string>>;
  /** Allow-list every fixture server of this process (default true). */
  allowFixtures?: boolean;
  /** A stub DNS resolver for the network policy (rebinding tests). */
  resolver?: Resolver;
}

/** Starts the real service on port 0 with a fresh database, an organization and a key. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => undefined }
    : await createTestDatabase(options.database ?? 'sqlite');
  // Files of async jobs go to a directory of the test's own unless the test shares one with workers.
  const resultsDir = options.env?.RESULTS_DIR ? undefined : mkdtempSync(join(tmpdir(), 'daguerre-results-'));
  const config = loadConfig(
    {},
    {
      ...(resultsDir ? { RESULTS_DIR: resultsDir } : {}),
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      MAX_CONCURRENCY: '2',
      CAPTURE_TIMEOUT_MS: '20000',
      LOG_LEVEL: 'info',
      // The suite runs with the network policy ON; only fixture servers are allowed (allowFixtures).
      ALLOW_PRIVATE_NETWORK: 'false',
      ...options.env,
    },
  );
  const sink = new Writable({
    write(chunk, _encoding, done) {
      capturedLogLines.push(String(chunk));
      done();
    },
  });
  const runtime = await startRuntime(config, {
    logger: createLogger(config.LOG_LEVEL, sink),
    ...(options.resolver ? { resolver: options.resolver } : {}),
  });
  let stopAllowing = () => {};
  if (options.allowFixtures !== false) {
    for (const address of startedFixtureAddresses) runtime.policy.allowList.add(address);
    stopAllowing = onFixtureServerStarted((address) => runtime.policy.allowList.add(address));
  }
  const plan = await runtime.accounts.createPlan({
    name: `test-${Date.now()}-${Math.random()}`,
    tier: 'test',
    creditsPerMonth: options.credits ?? 1000,
  });
  const org = await runtime.accounts.createOrganization('Test org', plan);
  const key = await runtime.apiKeys.create({ organizationId: org.id, name: 'test' });
  const clientFor = (apiKey: string) => createClient({ baseUrl: runtime.url, apiKey });
  return {
    runtime,
    url: runtime.url,
    database,
    organizationId: org.id,
    apiKey: key.key,
    client: clientFor(key.key),
    clientFor,
    get: (path, init) => fetch(`${runtime.url}${path}`, init),
    stop: async () => {
      stopAllowing();
      await runtime.stop();
      await database.drop();
      if (resultsDir) rmSync(resultsDir, { recursive: true, force: true });
    },
  };
}

/** Builds a /capture query string from options (values URL-encoded). */
export function captureQuery(params: Record<string, string | number | boolean>): string {
  return new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
}
