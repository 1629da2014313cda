import { $all } from './dom.js';

/**
 * Times are rendered in UTC on the server (views/format.ts); this shows them in the reader's time
 * zone, on every page that has a <time data-local>.
 */
export function startLocalTimes(): void {
  const date = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
  const dateTime = new Intl.DateTimeFormat(undefined, {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
  $all('time[data-local]').forEach((el) => {
    const value = new Date(el.getAttribute('datetime') ?? '');
    if (isNaN(value.getTime())) return;
    el.textContent = (el.getAttribute('data-local') === 'date' ? date : dateTime).format(value);
  });
}
