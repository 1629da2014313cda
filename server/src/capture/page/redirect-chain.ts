import type { PageMetadata, RedirectVia } from '@daguerre/contract';
import type { HTTPResponse } from 'puppeteer-core';
import type { LoadedDocument } from '../pool/navigation-watch.js';
import { withoutCredentials } from './page-report.js';

export type RedirectHop = PageMetadata['redirects'][number];

/** Chromium's reasons for a navigation a page asked for (Page.ClientNavigationReason), as the metadata names them. */
const VIA: Record<string, RedirectVia> = {
  scriptInitiated: 'script',
  reload: 'script',
  metaTagRefresh: 'metaRefresh',
  httpHeaderRefresh: 'refreshHeader',
  formSubmissionGet: 'form',
  formSubmissionPost: 'form',
  anchorClick: 'link',
};

/** The HTTP redirects that ended in `response`, in order. */
const httpHops = (response: HTTPResponse): RedirectHop[] =>
  response
    .request()
    .redirectChain()
    .map((hop) => ({ url: withoutCredentials(hop.url()), status: hop.response()?.status() ?? 0, via: 'http' }));

/**
 * Every address before `final` (the captured document's answer), in order: each document's HTTP
 * redirects, then the document itself with how the browser left it (a script, a meta refresh, a
 * form…), up to the final document's own HTTP redirects. Documents the page left after the final
 * one (a navigation that ended without a document) are not hops.
 */
export function redirectChain(documents: readonly LoadedDocument[], final: HTTPResponse | null): RedirectHop[] {
  if (!final) return [];
  const last = documents.findLastIndex((document) => document.response === final);
  const hops: RedirectHop[] = [];
  for (const document of documents.slice(0, Math.max(0, last))) {
    hops.push(...httpHops(document.response), {
      url: withoutCredentials(document.response.url()),
      status: document.response.status(),
      via: (document.leftBecause && VIA[document.leftBecause]) || 'other',
    });
  }
  hops.push(...httpHops(final));
  return hops;
}
