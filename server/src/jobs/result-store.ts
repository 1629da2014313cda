import type { Redis } from 'ioredis';

/**
 * Files of succeeded jobs that have no organization storage to live in: kept in Redis, which every
 * API instance and worker shares, for the retention time, then dropped by Redis itself.
 */
export class ResultStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  private key(jobId: string): string {
    return `${this.prefix}:results:${jobId}`;
  }

  async put(jobId: string, file: Buffer): Promise<void> {
    await this.redis.set(this.key(jobId), file, 'EX', this.ttlSeconds);
  }

  async get(jobId: string): Promise<Buffer | null> {
    return this.redis.getBuffer(this.key(jobId));
  }
}
