/**
 * The browser tab's sessionStorage, where the Playground keeps the API key it calls with (never
 * sent to the dashboard's server; docs/dashboard.md). The keys page writes it too: "Try it in the
 * Playground" carries a new key over.
 */

export const PLAYGROUND_KEY = 'daguerre.playground.apiKey';

/** Null where the browser refuses storage (private modes, blocked cookies): the key is then not kept. */
export function tabStorage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}
