import { randomBytes } from 'node:crypto';
import { ApiError, errors } from '../errors.js';
import type { OpenedFile, ResultFiles } from '../jobs/result-files.js';

/** The images of a POST /diff, each served at GET /diffs/{diffId}/{image}. */
export const DIFF_IMAGE_NAMES = ['before', 'after', 'diff'] as const;
export type DiffImageName = (typeof DIFF_IMAGE_NAMES)[number];

export const diffImagePath = (diffId: string, image: DiffImageName) => `/diffs/${diffId}/${image}`;

const DIFF_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A UUID version 7 (RFC 9562): its first 48 bits are the time it was made, so an id says when it expires. */
export function newDiffId(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const madeAt = (diffId: string) => parseInt(diffId.slice(0, 8) + diffId.slice(9, 13), 16);

/**
 * Where the images of one-off diffs live: the result store of async jobs (result-files.ts: the
 * local RESULTS_DIR or the deployment's bucket), for JOB_RESULT_TTL_SECONDS. Keys are
 * `diff-<diffId>/<organizationId>.<image>.png`: two levels, like a job's `<jobId>/<token>.<ext>`, so
 * the sweeper of the local directory removes them with the files no job record points to once they
 * are older than the retention time; and the organization is in the key, so another organization's
 * request finds nothing, not even that the diff exists. Past the retention time an image answers
 * 404 whether or not a sweeper has run yet (the id says when it was made).
 */
export class DiffImages {
  constructor(
    private readonly files: ResultFiles,
    private readonly options: { ttlSeconds: number },
  ) {}

  get ttlSeconds(): number {
    return this.options.ttlSeconds;
  }

  private key(diffId: string, organizationId: string, image: DiffImageName): string {
    return `diff-${diffId}/${organizationId}.${image}.png`;
  }

  async put(diffId: string, organizationId: string, images: Partial<Record<DiffImageName, Buffer>>): Promise<void> {
    try {
      await Promise.all(
        Object.entries(images).map(([image, png]) =>
          this.files.put(this.key(diffId, organizationId, image as DiffImageName), png, 'image/png'),
        ),
      );
    } catch (error) {
      throw errors.storeUnavailable(`result store (${this.files.description})`, error);
    }
  }

  async open(diffId: string, organizationId: string, image: string): Promise<OpenedFile> {
    if (!(DIFF_IMAGE_NAMES as readonly string[]).includes(image)) {
      throw new ApiError('NOT_FOUND', `No image "${image}" of a diff: one of ${DIFF_IMAGE_NAMES.join(', ')}`, {
        details: [{ field: 'image', message: `image must be one of: ${DIFF_IMAGE_NAMES.join(', ')}`, value: image }],
      });
    }
    const gone = new ApiError(
      'NOT_FOUND',
      `No ${image} image of diff ${diffId} for this organization (the images of a diff are kept for ${this.options.ttlSeconds} s; the diff image exists only when something changed)`,
    );
    if (!DIFF_ID.test(diffId) || Date.now() - madeAt(diffId) > this.options.ttlSeconds * 1000) throw gone;
    const opened = await this.files.open(this.key(diffId, organizationId, image as DiffImageName)).catch((error: unknown) => {
      throw errors.storeUnavailable(`result store (${this.files.description})`, error);
    });
    if (!opened) throw gone;
    return opened;
  }
}
