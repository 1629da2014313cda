/** Where a capture's file is uploaded: an S3-compatible bucket, with the credentials decrypted for this use. */
export interface StorageTarget {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  source: { kind: 'request' } | { kind: 'organization'; name: string };
}
