import type { AppRoute, ClientInferResponseBody, ParamsFromUrl } from '@ts-rest/core';

/** The parameters a route's path names: `{ jobId: string }` for `/captures/:jobId`. */
export type PathParams<TRoute extends AppRoute> = ParamsFromUrl<TRoute['path']>;

/** A route's success statuses, as the contract declares them. */
type SuccessStatus<TRoute extends AppRoute> = Extract<keyof TRoute['responses'], 200 | 201 | 202 | 204>;

/**
 * The body of a route's success answer as the contract types it. The client does not re-validate
 * it against the schema, like ts-rest's own client (validateResponse: false): a newer service
 * adding fields must not break older clients.
 */
export type SuccessBody<TRoute extends AppRoute> = ClientInferResponseBody<TRoute, SuccessStatus<TRoute>>;

/** What one call of a route carries besides its method and path, which come from the route. */
export type RouteRequest<TRoute extends AppRoute> = {
  /** The query string, already encoded (the capture options have their own list and JSON forms). */
  query?: URLSearchParams | string;
  headers?: Record<string, string>;
  /** The JSON body, already serialized. */
  body?: string;
} & (keyof PathParams<TRoute> extends never ? { params?: undefined } : { params: PathParams<TRoute> });

/**
 * The route's path with each `:param` replaced by its value, URI-encoded, and the query string
 * after a `?` when there is one: the contract names the path, never a string in the client.
 */
export function pathOf(route: AppRoute, request: { params?: Partial<Record<string, string>>; query?: URLSearchParams | string }): string {
  const params = request.params ?? {};
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_whole, name: string) => encodeURIComponent(params[name] ?? ''));
  const query = request.query?.toString() ?? '';
  return query === '' ? path : `${path}?${query}`;
}
