import { html, type SafeHtml } from '../html.js';
import type { ApiKeyRow } from '../../store/api-key-repository.js';
import { noOutcomes, type Outcomes, type UsageByKey } from '../usage-by-key.js';
import { formatNumber } from './format.js';
import { badge } from './layout.js';
import { keyLabel } from './usage-series.js';

/**
 * The period's totals per API key: what each key asked for and how it ended, with the colour the
 * chart gives it. Keys that did nothing in the period are listed too (unless revoked), so "my
 * key made no request" can be read here rather than guessed from a missing row.
 */

export interface KeyTotalsView {
  usage: UsageByKey;
  keys: ReadonlyMap<string, ApiKeyRow>;
  colourOf: ReadonlyMap<string | null, string>;
}

const COLUMNS = [
  ['charged', 'Charged'],
  ['cached', 'Cached'],
  ['failed', 'Failed'],
  ['refused', 'Refused'],
  ['credits', 'Credits'],
] as const satisfies readonly (readonly [keyof Outcomes, string])[];

function cells(o: Outcomes): SafeHtml[] {
  return COLUMNS.map(
    ([field, title]) => html`<td role="cell" class="num" data-col="${field}" data-label="${title}">${formatNumber(o[field])}</td>`,
  );
}

export function keyTotalsTable(view: KeyTotalsView): SafeHtml {
  const counted = new Set(view.usage.keys.map((k) => k.apiKeyId));
  const idle = [...view.keys.values()].filter((key) => key.revoked_at === null && !counted.has(key.id));
  const rows = [
    ...view.usage.keys.map((k) => ({ apiKeyId: k.apiKeyId, total: k.total })),
    ...idle.map((key) => ({ apiKeyId: key.id, total: noOutcomes() })),
  ];
  // Explicit roles: on a phone the stylesheet lays the rows out as blocks, which would otherwise cost
  // the table its semantics in some browsers.
  return html`<div class="table-wrap"><table role="table" class="table" id="usage-by-key-table">
    <thead role="rowgroup"><tr role="row"><th role="columnheader" scope="col">Key</th>${COLUMNS.map(([, title]) => html`<th role="columnheader" scope="col" class="num">${title}</th>`)}</tr></thead>
    <tbody role="rowgroup">${rows.map(({ apiKeyId, total }) => {
      const label = keyLabel(apiKeyId, view.keys);
      const colour = view.colourOf.get(apiKeyId);
      return html`<tr role="row" data-key-id="${apiKeyId ?? ''}">
        <th role="rowheader" scope="row"><span class="usage-key">${colour ? html`<span class="usage-swatch ${colour}" aria-hidden="true"></span>` : ''}<span class="usage-key-name">${label.name}</span>${label.prefix ? html` <code class="prefix">${label.prefix}…</code>` : ''}${label.revoked ? html` ${badge('bad', 'Revoked')}` : ''}</span></th>
        ${cells(total)}
      </tr>`;
    })}</tbody>
    <tfoot role="rowgroup"><tr role="row" class="usage-total"><th role="rowheader" scope="row">All keys</th>${cells(view.usage.total)}</tr></tfoot>
  </table></div>`;
}
