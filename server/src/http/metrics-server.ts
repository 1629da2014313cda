import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { metricsHandler, type OpsDependencies } from './ops-routes.js';

/**
 * `/metrics` on a port of its own (METRICS_PORT, bound to METRICS_HOST), so that it can stay off
 * the public API port (docs/reference/configuration.md). Only that one route is served there.
 */
export async function startMetricsServer(
  port: number,
  host: string,
  deps: OpsDependencies,
): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsHandler(deps));
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(port, host, () => resolve(listening));
    listening.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
