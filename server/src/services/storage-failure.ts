/** How a failed storage call reads: the client's message (stage, S3 code, a reason in words) and the log's detail. */
import type { S3ServiceException } from '@aws-sdk/client-s3';
import { ApiError } from '../errors.js';
import { destinationNotAllowed } from '../security/target-policy.js';
import type { StorageTarget } from '../store/storage-target.js';

/** The error code of guardedLookup's refusals. */
const REFUSED_CODE = 'EDESTINATIONREFUSED';
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Why a storage service refused, in words; keyed by the S3 error code. */
const S3_ERROR_HINTS: Record<string, (target: StorageTarget) => string> = {
  NoSuchBucket: (t) => `the bucket "${t.bucket}" does not exist`,
  InvalidAccessKeyId: () => 'the access key id is not known to the storage service',
  SignatureDoesNotMatch: () => 'the secret access key does not match the access key id',
  AccessDenied: (t) => `the credentials may not write to the bucket "${t.bucket}"`,
  AllAccessDisabled: (t) => `all access to the bucket "${t.bucket}" is disabled`,
  InvalidBucketName: (t) => `"${t.bucket}" is not a valid bucket name`,
  AuthorizationHeaderMalformed: (t) => `the region "${t.region}" does not match the bucket's region`,
  PermanentRedirect: (t) => `the bucket "${t.bucket}" lives in another region than "${t.region}" or needs another endpoint`,
  ExpiredToken: () => 'the credentials have expired',
  RequestTimeTooSkewed: () => "the server clock differs too much from the storage service's clock",
  EntityTooLarge: () => 'the file is larger than the storage service accepts',
  QuotaExceeded: () => 'the storage quota is exhausted',
  // HEAD requests (the connection test) carry no error body, only the status.
  NotFound: (t) => `the bucket "${t.bucket}" was not found`,
  Forbidden: (t) => `the credentials were refused for the bucket "${t.bucket}"`,
};

/** What was being done when a storage call failed, and how the message reads for it. */
export type FailurePurpose = 'download' | 'upload' | 'probe' | 'probe-delete';
const FAILURE_MESSAGES: Record<FailurePurpose, (reason: string, storage: string) => string> = {
  upload: (reason, storage) => `Upload to storage failed: ${reason} (${storage}); nothing was charged`,
  download: (reason, storage) => `Reading the file from storage failed: ${reason} (${storage})`,
  probe: (reason, storage) => `Connection test failed: ${reason} (${storage})`,
  'probe-delete': (reason, storage) =>
    `Connection test failed: the test object was written but could not be deleted: ${reason} (${storage})`,
};

const describeTarget = (target: StorageTarget) =>
  target.source.kind === 'organization' ? `storage configuration "${target.source.name}"` : 'per-request storage';

/** The bounds a storage call ran under, named in a timeout's message (STORAGE_CONNECT_TIMEOUT_MS, STORAGE_REQUEST_TIMEOUT_MS). */
export interface StorageTimeouts {
  connectTimeoutMs: number;
  requestTimeoutMs: number;
}

/** The egress policy's one message, naming where the endpoint came from. */
export function storageNotAllowed(target: StorageTarget): ApiError {
  return destinationNotAllowed(
    target.source.kind === 'request' ? 'requestStorageEndpoint' : `storage configuration "${target.source.name}"`,
  );
}

/** The client message names the stage and the S3 error code; the log gets the same facts, never credentials. */
export function storageFailure(
  target: StorageTarget,
  error: unknown,
  overallTimedOut: boolean,
  purpose: FailurePurpose,
  timeouts: StorageTimeouts,
  fromService?: S3ServiceException,
): ApiError {
  const err = error as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number; requestId?: string };
    cause?: { code?: string };
  };
  const host = new URL(target.endpoint).host;
  const logDetail = {
    stage: 'storage',
    storage: describeTarget(target),
    endpointHost: host,
    bucket: target.bucket,
    errorName: err?.name,
    errorCode: err?.code ?? err?.cause?.code,
    httpStatus: err?.$metadata?.httpStatusCode,
    storageRequestId: err?.$metadata?.requestId,
  };
  const fail = (reason: string) =>
    new ApiError('OPERATION_FAILED', FAILURE_MESSAGES[purpose](reason, describeTarget(target)), { logDetail });

  const code = err?.code ?? err?.cause?.code;
  if (code === REFUSED_CODE) return storageNotAllowed(target);
  if (fromService) {
    // The code comes from the endpoint's answer: only a short word of it is repeated.
    const s3Code = fromService.name.replace(/[^\w.-]/g, '').slice(0, 64);
    const hint = Object.hasOwn(S3_ERROR_HINTS, s3Code) ? S3_ERROR_HINTS[s3Code] : undefined;
    const status = fromService.$metadata?.httpStatusCode;
    if (hint) return fail(`${s3Code}, ${hint(target)}`);
    if (s3Code && !/^Unknown/.test(s3Code)) return fail(`${s3Code}${status ? ` (HTTP ${status})` : ''}`);
    return fail(`the storage endpoint at ${host} answered HTTP ${status ?? 'with an unreadable response'}`);
  }
  if (err?.name === 'TimeoutError' || overallTimedOut) {
    return fail(
      `timeout, the storage endpoint at ${host} did not answer in time (connect ${timeouts.connectTimeoutMs} ms, request ${timeouts.requestTimeoutMs} ms)`,
    );
  }
  if (code && UNREACHABLE_CODES.has(code)) return fail(`endpoint unreachable, ${host} (${code})`);
  return fail(`unexpected error talking to ${host}`);
}
