/** The `raw` member of the typed client: ts-rest's client of the contract, over the caller's fetch when one is given. */
import { initClient, type ApiFetcher, type InitClientReturn } from '@ts-rest/core';
import { contract, type Contract } from '@daguerre/contract';

interface RawClientArgs {
  baseUrl: string;
  baseHeaders: { 'x-api-key': string };
  api?: ApiFetcher;
}

/** The ts-rest client of the contract: routes `capture`, `captureWithBody`, `usage`. */
export type RawClient = InitClientReturn<Contract, RawClientArgs>;

/**
 * The same fetch-and-decode steps as ts-rest's default fetcher, over a caller-supplied fetch, so
 * `raw` honours `ClientOptions.fetch` too.
 */
function tsRestFetcher(fetchImpl: typeof fetch): ApiFetcher {
  return async ({ path, method, headers, body, fetchOptions }) => {
    const response = await fetchImpl(path, { ...fetchOptions, method, headers, body });
    const contentType = response.headers.get('content-type') ?? '';
    const decoded = contentType.includes('json')
      ? await response.json()
      : contentType.startsWith('text/')
        ? await response.text()
        : await response.blob();
    return { status: response.status, body: decoded, headers: response.headers };
  };
}

/** The raw client for these options: ts-rest's own fetch, or `fetchImpl` when the caller gave a fetch. */
export function createRawClient(baseUrl: string, apiKey: string, fetchImpl: typeof fetch | undefined): RawClient {
  const rawArgs: RawClientArgs = { baseUrl, baseHeaders: { 'x-api-key': apiKey } };
  if (fetchImpl) rawArgs.api = tsRestFetcher(fetchImpl);
  return initClient(contract, rawArgs);
}
