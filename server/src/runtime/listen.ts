import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import type { ProcessRole } from '../jobs/start-jobs.js';

/** Listens on PORT (WORKER_PORT for a worker) at HOST; answers the address this machine reaches the server at. */
export async function listenOn(server: Server, config: Config, role: ProcessRole): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(role === 'worker' ? config.WORKER_PORT : config.PORT, config.HOST, () => resolve());
  });
  const address = server.address() as AddressInfo;
  // The address this machine reaches the server at: loopback for a wildcard, IPv6 in brackets.
  const host =
    config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST === '::' ? '[::1]' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${address.port}`;
}
