import { z } from 'zod';
import { httpUrl } from './http-url-param.js';
import { LIMITS } from './limits.js';
import { booleanParam, numberParam, stringParam } from './params.js';

/** The parameters of `GET /capture` that keep the file besides answering it: the response cache and the S3 upload (docs/caching-storage-ai.md). */
export const captureDeliveryFields = {
  cacheEnabled: booleanParam('cacheEnabled', false, 'Enable response caching.'),
  cacheTtl: numberParam(
    'cacheTtl',
    { min: LIMITS.cacheTtlMinSeconds, max: LIMITS.cacheTtlMaxSeconds, unit: 'seconds' },
    3600,
    'Cache lifetime in seconds.',
  ),

  requestStorageEnabled: booleanParam(
    'requestStorageEnabled',
    false,
    'Upload the result to the S3-compatible storage given by the requestStorage* parameters.',
  ),
  requestStorageEndpoint: httpUrl('requestStorageEndpoint', 2_048).optional().describe('S3-compatible endpoint URL.'),
  requestStorageAccessKeyId: stringParam('requestStorageAccessKeyId', 256, 'Access key ID.'),
  requestStorageSecretAccessKey: stringParam('requestStorageSecretAccessKey', 1_024, 'Secret access key. Never stored or logged.'),
  requestStorageBucket: stringParam('requestStorageBucket', 255, 'Bucket name.'),
  requestStorageRegion: z
    .string({ errorMap: () => ({ message: 'requestStorageRegion must be a string' }) })
    .min(1, 'requestStorageRegion must not be empty')
    .max(64, 'requestStorageRegion must be at most 64 characters')
    .default('us-east-1')
    .describe('Region. Default: us-east-1.'),
};
