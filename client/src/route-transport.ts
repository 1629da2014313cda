/** One request of a contract route: sent with the key, retried on 429/503 when asked, its JSON answer read. */
import type { AppRoute } from '@ts-rest/core';
import { errorFromResponse, headersToRecord, parseJson, DaguerreError } from './daguerre-error.js';
import type { ClientOptions } from './daguerre-client.js';
import { DEFAULT_MAX_DELAY_MS, isRetryableStatus, retryDelayMs, sleep } from './retry.js';
import { pathOf, type RouteRequest, type SuccessBody } from './route-request.js';

/**
 * The JSON body of a route's 2xx answer, typed by the contract (not re-validated: see SuccessBody).
 * A 2xx whose body is not JSON is a broken deployment (proxy page), reported like a server error.
 */
export async function readJson<TRoute extends AppRoute>(_route: TRoute, response: Response): Promise<SuccessBody<TRoute>> {
  const text = await response.text();
  const body = parseJson(text);
  if (body === undefined) {
    throw new DaguerreError({
      status: response.status,
      code: 'INTERNAL_ERROR',
      message: `Expected a JSON body from ${response.url || 'the service'}, got ${response.headers.get('content-type') ?? 'no content type'}`,
      headers: headersToRecord(response.headers),
    });
  }
  return body as SuccessBody<TRoute>;
}

/**
 * `send` and `callJson` of a client: `options` is read on every call (key, retry), `baseUrl` and
 * `fetchImpl` are those createClient settled once.
 */
export function routeTransport(options: Pick<ClientOptions, 'apiKey' | 'retry'>, baseUrl: string, fetchImpl: typeof fetch) {
  const maxDelayMs = options.retry?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;

  /** Sends one request of a contract route, retrying 429/503 when `retry` is set; resolves only with a 2xx response. */
  async function send<TRoute extends AppRoute>(route: TRoute, request: RouteRequest<TRoute>): Promise<Response> {
    const headers = { ...request.headers, 'x-api-key': options.apiKey };
    const url = `${baseUrl}${pathOf(route, request)}`;
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(url, { method: route.method, headers, body: request.body });
      if (response.ok) return response;
      const error = await errorFromResponse(response);
      const mayRetry = options.retry !== undefined && attempt < options.retry.maxRetries && isRetryableStatus(response.status);
      if (!mayRetry) throw error;
      await sleep(retryDelayMs(error.retryAfterSeconds, attempt, maxDelayMs));
    }
  }

  /** A 2xx JSON answer of a route, sent with `accept: application/json`. */
  async function callJson<TRoute extends AppRoute>(route: TRoute, request: RouteRequest<TRoute>): Promise<SuccessBody<TRoute>> {
    return readJson(route, await send(route, { ...request, headers: { accept: 'application/json', ...request.headers } }));
  }

  return { send, callJson };
}
