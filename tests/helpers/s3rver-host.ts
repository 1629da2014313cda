/**
 * s3rver as a process of its own, so that it can run on a simulated host (a network namespace):
 *   node --import tsx tests/helpers/s3rver-host.ts <address> <port> <directory> <bucket> <accessKeyId> <secretAccessKey>
 * Prints "ready" once it listens; SIGTERM stops it.
 */
import S3rver from 's3rver';
import accounts from 's3rver/lib/models/account.js';

const [address, port, directory, bucket, accessKeyId, secretAccessKey] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
accounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
const server = new S3rver({ address, port: Number(port), silent: true, directory, configureBuckets: [{ name: bucket }] });
await server.run();
console.log('ready');
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
