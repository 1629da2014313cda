/**
 * Redaction by meaning rather than by spelling (docs/containment.md). A caller who misspells the
 * key's parameter (`api_key=`, `key=`, `access-key=`, `APIKEY%00=`) still sends a secret, and a URL
 * written `http:\\user:pass@host` still carries a password: neither may reach a log line or an
 * error body. So a parameter name is normalized (%-escapes decoded, Unicode compatibility forms
 * folded, lower-cased, everything but letters and digits dropped: NUL, `_`, `-`, `.`, brackets) and
 * masked when it looks like a key, token, secret, password or signature; every URL credential
 * notation the WHATWG URL parser accepts is masked in values; and anything shaped like one of our
 * API keys is masked wherever it appears.
 */

const MASK = '[REDACTED]';

/** Normalized names of fields whose values are secrets but whose names do not say so. */
const SECRET_NAMES = new Set(['headers', 'proxyusername', 'authorization']);

/** Words that make a normalized name a secret's name, wherever they occur in it. */
const SECRET_WORDS = [
  'key',
  'token',
  'secret',
  'passw',
  'passphrase',
  'pwd',
  'signature',
  'credential',
  'auth',
  'cookie',
  'session',
  'bearer',
  'hmac',
  'private',
  'jwt',
];

/** Short forms that are a secret's name at the end of one (`pass`, `userPass`, `sig`, `urlSig`, `pw`). */
const SECRET_ENDINGS = ['pass', 'sig', 'pw'];

/** One of the service's API keys (services/api-keys.ts: `rs_` and 43 base64url characters), and other prefixed keys. */
const KEY_SHAPED = /\b(rs|sk|pk|rk)_[A-Za-z0-9_-]{16,}/g;

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    // A stray % stops decodeURIComponent: decode the escapes that are well formed.
    return text.replace(/\+/g, ' ').replace(/(%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/** The comparable form of a parameter name: decoded (twice encoded too), folded, lower-case letters and digits only. */
function decodeFully(name: string): string {
  let decoded = name;
  for (let i = 0; i < 3; i++) {
    const next = safeDecode(decoded);
    if (next === decoded) break;
    decoded = next;
  }
  return decoded.normalize('NFKC');
}

const fold = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

export function isSecretName(name: string): boolean {
  const decoded = decodeFully(name);
  const normalized = fold(decoded);
  // The field a qs-style name addresses: `sig[0]` and `apiKey[]` are `sig` and `apiKey`.
  const bracket = decoded.indexOf('[');
  const base = bracket === -1 ? normalized : fold(decoded.slice(0, bracket));
  if (SECRET_NAMES.has(base)) return true;
  return SECRET_WORDS.some((word) => normalized.includes(word)) || SECRET_ENDINGS.some((ending) => base.endsWith(ending));
}

/**
 * Masks URL credentials in a text. The WHATWG parser takes any number of `/` or `\` after a special
 * scheme (`http:\\user:pass@host`, `http:user:pass@host`), ignores tabs and newlines inside a URL,
 * and ends the userinfo at the last `@` of the authority. So the text is cut into runs between
 * authority delimiters (`/`, `\`, `?`, `#`, spaces), and in a run that holds an `@` everything
 * before its last `@` is masked when it has a `:` (user:password, or a scheme written without
 * slashes) or the run opens an authority (`scheme://user@host`, `//user@host`; not `/path/a@b`). One pass over the text: linear time.
 */
export function maskUserinfo(text: string): string {
  // Tabs and newlines are no delimiters: the URL parser drops them, so `us\ter:pw@host` is one userinfo.
  let out = text.includes('@') ? text.replace(/[^/\\?#\x20\f\v]+/g, (run, offset: number) => maskRun(run, text, offset)) : text;
  out = out.replace(KEY_SHAPED, (_key, prefix: string) => `${prefix}_${MASK}`);
  return out;
}

function maskRun(run: string, text: string, offset: number): string {
  const at = run.lastIndexOf('@');
  if (at <= 0) return run;
  return run.slice(0, at).includes(':') || startsAuthority(text, offset) ? `${MASK}${run.slice(at)}` : run;
}

/** Whether the run at `offset` follows the slashes that open an authority (`scheme://`, `//`), not a path's slash. */
function startsAuthority(text: string, offset: number): boolean {
  let i = offset - 1;
  while (i >= 0 && (text[i] === '/' || text[i] === '\\')) i--;
  if (i === offset - 1) return false;
  return i < 0 || text[i] === ':' || /[\s"'=(<,;]/.test(text[i]!);
}

function redactPair(pair: string): string {
  const equals = pair.indexOf('=');
  if (equals === -1) return maskName(pair);
  const rawName = pair.slice(0, equals);
  if (isSecretName(rawName)) return `${maskName(rawName)}=${MASK}`;
  const rawValue = pair.slice(equals + 1);
  const decoded = safeDecode(rawValue);
  const masked = maskUserinfo(decoded);
  return masked === decoded ? `${maskName(rawName)}=${rawValue}` : `${maskName(rawName)}=${encodeURIComponent(masked)}`;
}

/** A name is logged as sent unless it holds a key itself (`?rs_…=` or `?rs_…`). */
function maskName(rawName: string): string {
  const decoded = safeDecode(rawName);
  const masked = maskUserinfo(decoded);
  return masked === decoded ? rawName : encodeURIComponent(masked);
}

/** Removes secret query values and URL credentials from a URL or message before it is logged. */
export function redactUrl(text: string): string {
  const question = text.indexOf('?');
  if (question === -1) return maskUserinfo(text);
  const hash = text.indexOf('#', question);
  const query = hash === -1 ? text.slice(question + 1) : text.slice(question + 1, hash);
  const fragment = hash === -1 ? '' : text.slice(hash);
  // `;` separates parameters for some parsers: a name after it is judged too.
  const redacted = query
    .split('&')
    .map((pair) => pair.split(';').map(redactPair).join(';'))
    .join('&');
  return `${maskUserinfo(text.slice(0, question))}?${redacted}${fragment === '' ? '' : MASK}`;
}

/**
 * What an error body may echo for a field: never a secret field's value (in any spelling), never
 * a header value, never the credentials inside a URL, never anything shaped like an API key.
 */
export function echoableValue(field: string, value: unknown, depth = 0): unknown {
  if (isSecretName(field)) return value === undefined ? undefined : MASK;
  if (typeof value === 'string') return maskUserinfo(value);
  if (Array.isArray(value)) return depth > 8 ? MASK : value.map((item) => echoableValue(field, item, depth + 1));
  // An object's members are judged by their own names (a JSON body's nested `api_key`).
  if (value !== null && typeof value === 'object') {
    if (depth > 8) return MASK;
    return Object.fromEntries(Object.entries(value).map(([name, member]) => [echoableName(name), echoableValue(name, member, depth + 1)]));
  }
  return value;
}

/** A field name as an error body may show it: a name that is itself key-shaped is masked. */
export function echoableName(field: string): string {
  return maskUserinfo(field);
}
