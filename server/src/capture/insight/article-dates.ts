/**
 * Dates as pages write them, read as instants (docs/page-insight.md, "Article metadata"): ISO 8601,
 * RFC 2822, Unix time, and dates in words or digits in the languages news pages are most often in.
 * A time with no zone is read in the page's zone when its language has a single one (Japanese and
 * Korean +09:00, Chinese +08:00), else as UTC; a date with no time is that day's midnight there.
 */

/** How much of the instant the text gave: a zoned time, a time without zone, or a day. */
export type DatePrecision = 2 | 1 | 0;
export interface ReadDate {
  iso: string;
  precision: DatePrecision;
  /** The day as written (YYYY-MM-DD in the text's own zone): two texts of one day agree on it. */
  day: string;
}
export interface DateContext {
  /** Minutes east of UTC for a time written without a zone. */
  zoneMinutes: number;
  /** 03/04/2020 is the 3rd of April (true) or March 4th (false: US English). */
  dayFirst: boolean;
}

const UTC: DateContext = { zoneMinutes: 0, dayFirst: false };

/** The context a page's language implies. */
export function dateContext(language: string | null): DateContext {
  const lang = (language ?? '').toLowerCase();
  const zoneMinutes = /^(ja|ko)\b/.test(lang) ? 540 : /^zh\b/.test(lang) ? 480 : 0;
  return { zoneMinutes, dayFirst: !(lang === '' || lang === 'en' || lang === 'en-us') };
}

const MONTH_WORDS: Array<[number, string]> = [
  [0, 'jan january janvier janv januar jänner enero gennaio janeiro januari'],
  [1, 'feb february février févr fevr februar febrero febbraio fevereiro februari'],
  [2, 'mar march mars märz marzo março maart'],
  [3, 'apr april avril avr abril aprile'],
  [4, 'may mai mayo maggio maio mei'],
  [5, 'jun june juin juni junio giugno junho'],
  [6, 'jul july juillet juil juli julio luglio julho'],
  [7, 'aug august août agosto augustus'],
  [8, 'sep sept september septembre settembre septiembre setiembre setembro'],
  [9, 'oct october octobre oktober octubre ottobre outubro okt'],
  [10, 'nov november novembre noviembre novembro'],
  [11, 'dec december décembre déc dezember diciembre dicembre dezembro'],
];
const MONTHS = new Map(MONTH_WORDS.flatMap(([month, words]) => words.split(' ').map((word) => [word, month] as const)));

/** Zones written as letters on US and European news pages, minutes east of UTC; ET/PT/CT/MT follow US daylight time. */
const ZONES: Record<string, number> = {
  utc: 0,
  gmt: 0,
  z: 0,
  ut: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
  bst: 60,
  cet: 60,
  cest: 120,
  mez: 60,
  mesz: 120,
  eet: 120,
  eest: 180,
  ist: 330,
  jst: 540,
  kst: 540,
  aest: 600,
  aedt: 660,
};
const US_ZONES: Record<string, number> = { et: -300, ct: -360, mt: -420, pt: -480 };

/** US daylight time: from the second Sunday of March to the first Sunday of November. */
function usDaylight(year: number, month: number, day: number): boolean {
  const sunday = (m: number, nth: number) => {
    const first = new Date(Date.UTC(year, m, 1)).getUTCDay();
    return 1 + ((7 - first) % 7) + 7 * (nth - 1);
  };
  if (month < 2 || month > 10) return false;
  if (month > 2 && month < 10) return true;
  return month === 2 ? day >= sunday(2, 2) : day < sunday(10, 1);
}

function zoneOffset(zone: string | undefined, year: number, month: number, day: number): number | undefined {
  if (!zone) return undefined;
  const numeric = /^(?:gmt|utc)?([+-])(\d{1,2}):?(\d{2})?$/i.exec(zone);
  if (numeric) return (numeric[1] === '-' ? -1 : 1) * (+numeric[2]! * 60 + +(numeric[3] ?? 0));
  const name = zone.toLowerCase();
  if (name in US_ZONES) return US_ZONES[name]! + (usDaylight(year, month, day) ? 60 : 0);
  return ZONES[name];
}

/** Years a published page can have: before the web's articles, or well in the future, is something else. */
function build(y: number, mo: number, d: number, time: number[] | null, offset: number | undefined, context: DateContext): ReadDate | null {
  if (mo < 0 || mo > 11 || d < 1 || d > 31 || y < 1990 || y > new Date().getUTCFullYear() + 1) return null;
  const [h = 0, mi = 0, s = 0, ms = 0] = time ?? [];
  if (h > 23 || mi > 59 || s > 60) return null;
  const local = Date.UTC(y, mo, d, h, mi, s, ms);
  const instant = local - (offset ?? context.zoneMinutes) * 60_000;
  if (!Number.isFinite(instant)) return null;
  const day = new Date(Date.UTC(y, mo, d)).toISOString().slice(0, 10);
  return { iso: new Date(instant).toISOString(), precision: !time ? 0 : offset !== undefined ? 2 : 1, day };
}

const ISO = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:T|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const TIME = String.raw`(?:,|\s+at|\s+à|\s+um|\s+a las|\s+alle|\s*[-–|•·/])?\s*(\d{1,2})[:h.](\d{2})(?::(\d{2}))?\s*([ap]\.?\s?m\.?)?(?:\s*\(?((?:gmt|utc)?[+-]\d{1,2}(?::?\d{2})?|[a-z]{1,5})\b\)?)?`;
/** "September 19, 2016 11:46 AM EDT", "19 Sep. 2016, 11:46", "Mon, 19 Sep 2016 11:46:01 +0000", "7 de mayo de 2019". */
const WORDS = new RegExp(
  String.raw`(?:(\d{1,2})(?:st|nd|rd|th|er|\.)?\s+(?:de\s+)?(\p{L}{3,10})\.?,?\s+(?:de\s+)?(\d{4})|(\p{L}{3,10})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}))(?:${TIME})?`,
  'iu',
);
/** "10/17/2022 04:01 PM EDT", "2019.03.08", "2019/04/04 12:00". */
const DIGITS = new RegExp(String.raw`(?:(\d{4})[/.](\d{1,2})[/.](\d{1,2})|(\d{1,2})[/.](\d{1,2})[/.](\d{4}))(?!\d)(?:${TIME})?`, 'i');
/** 2019年4月4日 14時30分 */
const CJK = /(\d{4})年\s*(\d{1,2})月\s*(\d{1,2})日(?:\s*(?:\([^)]*\)|（[^）]*）)?\s*(\d{1,2})(?:時|:)(\d{2})分?)?/;
/** Java and JavaScript's own Date strings: "Mon Aug 03 12:45:00 EDT 2015", "Tue Dec 20 2016 13:00:00 GMT+0000 (UTC)". */
const ENGINE = /^[a-z]{3} ([a-z]{3}) (\d{1,2})(?: (\d{4}))? (\d{2}):(\d{2}):(\d{2}) ([a-z]{2,5}|gmt[+-]\d{4})(?: (\d{4}))?/i;

function clock(h: string | undefined, mi: string | undefined, s: string | undefined, ampm?: string): number[] | null {
  if (h === undefined || mi === undefined) return null;
  let hour = +h;
  if (ampm && /^p/i.test(ampm) && hour < 12) hour += 12;
  if (ampm && /^a/i.test(ampm) && hour === 12) hour = 0;
  return [hour, +mi, s ? +s : 0];
}

export function readDate(raw: string | null | undefined, context: DateContext = UTC): ReadDate | null {
  const value = (raw ?? '').replace(/\s+/g, ' ').trim();
  if (!value || value.length > 200) return null;
  if (/^\d{10}(?:\d{3})?$/.test(value)) {
    const date = new Date(value.length === 10 ? +value * 1000 : +value);
    return build(
      date.getUTCFullYear(),
      date.getUTCMonth(),
      date.getUTCDate(),
      [date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), date.getUTCMilliseconds()],
      0,
      context,
    );
  }
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  if (compact) return build(+compact[1]!, +compact[2]! - 1, +compact[3]!, null, undefined, context);
  const iso = ISO.exec(value);
  if (iso) {
    const [, y, mo, d, h, mi, s, fraction, zone] = iso;
    const time = clock(h, mi, s);
    if (time && fraction) time.push(Math.round(Number(`0.${fraction}`) * 1000));
    return build(+y!, +mo! - 1, +d!, time, zoneOffset(zone === 'Z' || zone === 'z' ? 'z' : zone, +y!, +mo! - 1, +d!), context);
  }
  const engine = ENGINE.exec(value);
  if (engine) {
    const [, mon, d, y1, h, mi, s, zone, y2] = engine;
    const [y, mo] = [+(y1 ?? y2)!, MONTHS.get(mon!.toLowerCase()) ?? -1];
    return build(y, mo, +d!, clock(h, mi, s), zoneOffset(zone!.replace(/^gmt/i, ''), y, mo, +d!), context);
  }
  const words = WORDS.exec(value);
  if (words && MONTHS.has((words[2] ?? words[4])!.toLowerCase())) {
    const [, d1, m1, y1, m2, d2, y2, h, mi, s, ampm, zone] = words;
    const [y, mo, d] = [+(y1 ?? y2)!, MONTHS.get((m1 ?? m2)!.toLowerCase())!, +(d1 ?? d2)!];
    const time = clock(h, mi, s, ampm);
    return build(y, mo, d, time, time ? zoneOffset(zone, y, mo, d) : undefined, context);
  }
  const cjk = CJK.exec(value);
  if (cjk) return build(+cjk[1]!, +cjk[2]! - 1, +cjk[3]!, clock(cjk[4], cjk[5], undefined), undefined, context);
  const digits = DIGITS.exec(value);
  if (digits) {
    const [, yA, moA, dA, a, b, yB, h, mi, s, ampm, zone] = digits;
    const [y, first, second] = yA ? [+yA, +moA!, +dA!] : context.dayFirst ? [+yB!, +b!, +a!] : [+yB!, +a!, +b!];
    // 25/04/2020 is day first whatever the language says.
    const [mo, d] = !yA && first > 12 && second <= 12 ? [second, first] : [first, second];
    const time = clock(h, mi, s, ampm);
    return build(y, mo - 1, d, time, time ? zoneOffset(zone, y, mo - 1, d) : undefined, context);
  }
  // A date inside other text ("Updated 2016-09-19T11:46:01Z by …").
  const embedded = /\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/.exec(value);
  return embedded && embedded[0] !== value ? readDate(embedded[0], context) : null;
}

/** An instant as ISO 8601 in UTC (`2016-09-19T11:46:01.000Z`), or null when the value holds no date. */
export function parseDate(raw: string | null | undefined, context: DateContext = UTC): string | null {
  return readDate(raw, context)?.iso ?? null;
}
