import type * as S3 from '@aws-sdk/client-s3';
import type { NodeHttpHandler } from '@smithy/node-http-handler';

/** The AWS SDK's S3 client and the HTTP handler it is given (storage.ts, jobs/result-files.ts). */
export interface S3Sdk {
  s3: typeof S3;
  NodeHttpHandler: typeof NodeHttpHandler;
}

let loading: Promise<S3Sdk> | undefined;

/**
 * Loaded at the first upload or result file in a bucket: a process that never writes to S3 (the
 * embedded default, or a worker before its first such job) does not hold the SDK (docs/scaling.md,
 * "Memory of an idle worker").
 */
export function loadS3Sdk(): Promise<S3Sdk> {
  loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@smithy/node-http-handler')]).then(([s3, http]) => ({
    s3,
    NodeHttpHandler: http.NodeHttpHandler,
  }));
  return loading;
}
