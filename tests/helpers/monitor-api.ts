import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifyWebhook } from '../../client/src/index.js';
import type { Delivery } from './webhooks.js';

/** A JSON call on the service with a key: status and parsed body (the monitors' faces are tested elsewhere). */
export function monitorApi(baseUrl: string, apiKey: string) {
  return async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

export interface MonitorEvent {
  type: string;
  timestamp: string;
  data: {
    monitorId: string;
    name: string;
    url: string;
    reason?: string;
    images?: { newUrl: string | null; baselineUrl: string | null; diffUrl: string | null };
    run?: {
      runId: string;
      status: string;
      requestId: string | null;
      credits: number;
      targetStatus: number | null;
      error: { code: string; message: string } | null;
      baselineRunId: string | null;
      diff: { diffPercent: number; changed: boolean; textAdded: string[]; textRemoved: string[]; diffImageUrl: string | null } | null;
    };
  };
}

/**
 * A webhook receiver route for a FixtureServer: every delivery is verified with the SDK's
 * verifyWebhook (the Standard Webhooks library) against the secret of the key that signed it, and
 * kept with its webhook-id. A delivery that does not verify is kept as `unverified`, so a test can
 * assert there are none.
 */
export class WebhookInbox {
  readonly events: Array<MonitorEvent & { id: string }> = [];
  readonly unverified: Delivery[] = [];
  private readonly secrets = new Set<string>();

  trust(secret: string): void {
    this.secrets.add(secret);
  }

  readonly handler = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const headers = req.headers as Record<string, string>;
      let verified: MonitorEvent | undefined;
      for (const secret of this.secrets) {
        try {
          verified = verifyWebhook(secret, body, headers) as unknown as MonitorEvent;
          break;
        } catch {
          // Another key's secret: try the next one.
        }
      }
      if (verified) this.events.push({ ...verified, id: String(req.headers['webhook-id']) });
      else this.unverified.push({ headers: req.headers, body });
      res.statusCode = 204;
      res.end();
    });
  };

  of(monitorId: string, type?: string) {
    return this.events.filter((event) => event.data.monitorId === monitorId && (type === undefined || event.type === type));
  }
}
