import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { ClientGoneError } from '../capture/capture-error.js';
import { packageFile } from '../package-files.js';
import { ignoreBecause } from '../ignore-error.js';

/**
 * Runs callers' JSON Schemas (openaiSchema) off the event loop: compiling a schema and applying it
 * to a model's answer happen in worker threads (server/workers/json-schema-check.mjs) of a piscina
 * pool (https://github.com/piscinajs/piscina), never on the thread that answers every
 * organization's requests and /health. Each task is bounded:
 * - its own work: SCHEMA_WORK_LIMIT_MS of running time and SCHEMA_HEAP_LIMIT_MB of heap; past
 *   either, the thread is ended and the task fails with SchemaWorkExceeded. Running time is counted
 *   from when a thread took the task (it writes that moment to a shared cell), so waiting behind
 *   others' schemas is never held against a schema;
 * - its organization: one task at a time per organization (a bulk of many schemas waits for its
 *   own turns and cannot fill the pool's queue), in order;
 * - the pool: at most MAX_QUEUED tasks wait, none longer than SCHEMA_QUEUE_WAIT_MS; past either
 *   the service is busy (SchemaCheckerBusy: 503 with Retry-After).
 * Compiled schemas live in the task's own Ajv instance and die with it.
 */
export const SCHEMA_WORK_LIMIT_MS = 3_000;
export const SCHEMA_HEAP_LIMIT_MB = 64;
const MAX_QUEUED = 64;
/** The longest a check waits for a thread before the service says it is busy (503, Retry-After). */
export const SCHEMA_QUEUE_WAIT_MS = 10_000;

export type SchemaTask = { op: 'compile'; schema: string } | { op: 'validate'; schema: string; answer: string };
export type SchemaOutcome =
  { ok: true; problems?: string[] } | { ok: false; reason: string; unsupportedPattern?: string; patternProblem?: string };

/** The schema itself needs more work than a request may take (time or memory). */
export class SchemaWorkExceeded extends Error {}
/** Too many schemas are waiting for a thread. */
export class SchemaCheckerBusy extends Error {}

export class SchemaChecker {
  private pool: Piscina | undefined;
  /** The last task of each organization: the next one starts after it. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly threads = Math.max(1, Math.floor(availableParallelism() / 2))) {}

  /** Runs the task after the organization's earlier ones; rejects with ClientGoneError when `signal` aborts first. */
  run(organizationId: string, task: SchemaTask, signal?: AbortSignal): Promise<SchemaOutcome> {
    const previous = this.tails.get(organizationId) ?? Promise.resolve();
    const mine = previous.then(() => this.runNow(task, signal));
    const tail = mine.catch(ignoreBecause('the caller of run sees the failure; the next task only waits its turn'));
    this.tails.set(organizationId, tail);
    // tail never rejects (its failure is ignored above): nothing to handle here.
    void tail.then(() => {
      if (this.tails.get(organizationId) === tail) this.tails.delete(organizationId);
    });
    return mine;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  private poolOf(): Piscina {
    this.pool ??= new Piscina({
      filename: packageFile('workers', 'json-schema-check.mjs'),
      // Every thread is kept (made on the first schema, ~20 MB each): piscina starts a thread for the
      // waiting tasks only when a task arrives or its minimum is short, so with fewer kept, a thread
      // ended by a check over its limit left the queue waiting for the next schema to come along.
      minThreads: this.threads,
      maxThreads: this.threads,
      maxQueue: MAX_QUEUED,
      resourceLimits: { maxOldGenerationSizeMb: SCHEMA_HEAP_LIMIT_MB, maxYoungGenerationSizeMb: 16 },
    });
    return this.pool;
  }

  private async runNow(task: SchemaTask, signal: AbortSignal | undefined): Promise<SchemaOutcome> {
    if (signal?.aborted) throw new ClientGoneError();
    const startedAt = new BigInt64Array(new SharedArrayBuffer(8));
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let overran = false;
    let timer: NodeJS.Timeout | undefined;
    const queued = Date.now();
    let waitedTooLong = false;
    const watch = () => {
      const started = Number(Atomics.load(startedAt, 0));
      if (started === 0) {
        // Still waiting for a thread: look again shortly, up to SCHEMA_QUEUE_WAIT_MS.
        if (Date.now() - queued < SCHEMA_QUEUE_WAIT_MS) return void (timer = setTimeout(watch, 50));
        waitedTooLong = true;
        return controller.abort();
      }
      const left = started + SCHEMA_WORK_LIMIT_MS - Date.now();
      if (left > 0) return void (timer = setTimeout(watch, left));
      overran = true;
      controller.abort();
    };
    timer = setTimeout(watch, 50);
    try {
      return (await this.poolOf().run({ ...task, startedAt }, { signal: controller.signal })) as SchemaOutcome;
    } catch (error) {
      if (overran) throw new SchemaWorkExceeded(`more than ${SCHEMA_WORK_LIMIT_MS / 1000} s of work`);
      if (waitedTooLong) throw new SchemaCheckerBusy(`no thread was free within ${SCHEMA_QUEUE_WAIT_MS / 1000} s`);
      if (signal?.aborted) throw new ClientGoneError();
      const code = (error as { code?: string }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') throw new SchemaWorkExceeded(`more than ${SCHEMA_HEAP_LIMIT_MB} MB of memory`);
      if (error instanceof Error && /task queue/i.test(error.message)) throw new SchemaCheckerBusy(error.message);
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
