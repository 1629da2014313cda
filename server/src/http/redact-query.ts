/**
 * Redaction by meaning rather than by spelling (issue #15): Express decodes parameter names
 * (`apiK%65y` is `apiKey`) and qs strips brackets (`apiKey[]`), so a regular expression over the
 * raw URL misses them. Here each query parameter is decoded first, its name compared
 * case-insensitively with the secret fields, and credentials inside any URL value masked.
 */

const MASK = '[REDACTED]';

/** Lower-cased names whose values are secrets wherever they appear. */
const SECRET_NAMES = new Set([
  'apikey',
  'openaiapikey',
  'proxypassword',
  'proxyusername',
  'requeststoragesecretaccesskey',
  'requeststorageaccesskeyid',
  'headers',
  'x-api-key',
  'x-openai-api-key',
  'authorization',
  'signature',
  'token',
]);

// Anchored on the literal `://`, so the scan is linear: a scheme pattern in front of it made each
// match attempt walk the whole text, and a 100 000-character html held the event loop for 30 s.
const USERINFO = /:\/\/[^/?#\s@]*@/g;

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The field a qs-style name addresses: `apiKey[0]` and `apiKey[]` are `apiKey`. */
function baseName(decodedName: string): string {
  const bracket = decodedName.indexOf('[');
  return (bracket === -1 ? decodedName : decodedName.slice(0, bracket)).trim().toLowerCase();
}

export function isSecretName(name: string): boolean {
  return SECRET_NAMES.has(baseName(safeDecode(name)));
}

/** Masks `user:pass@` in every URL found in the text. */
export function maskUserinfo(text: string): string {
  return text.replace(USERINFO, `://${MASK}@`);
}

function redactPair(pair: string): string {
  const equals = pair.indexOf('=');
  const rawName = equals === -1 ? pair : pair.slice(0, equals);
  if (equals === -1) return pair;
  if (isSecretName(rawName)) return `${rawName}=${MASK}`;
  const rawValue = pair.slice(equals + 1);
  const decoded = safeDecode(rawValue);
  const masked = maskUserinfo(decoded);
  return masked === decoded ? pair : `${rawName}=${encodeURIComponent(masked)}`;
}

/** Removes secret query values and URL credentials from a URL or message before it is logged. */
export function redactUrl(text: string): string {
  const question = text.indexOf('?');
  if (question === -1) return maskUserinfo(text);
  const hash = text.indexOf('#', question);
  const query = hash === -1 ? text.slice(question + 1) : text.slice(question + 1, hash);
  const fragment = hash === -1 ? '' : text.slice(hash);
  const redacted = query.split('&').map(redactPair).join('&');
  return `${maskUserinfo(text.slice(0, question))}?${redacted}${fragment === '' ? '' : MASK}`;
}

/**
 * What an error body may echo for a field: never a secret field's value (in any spelling),
 * never a header value, never the credentials inside a URL.
 */
export function echoableValue(field: string, value: unknown): unknown {
  if (isSecretName(field)) return value === undefined ? undefined : MASK;
  if (typeof value === 'string') return maskUserinfo(value);
  if (Array.isArray(value)) return value.map((item) => echoableValue(field, item));
  return value;
}
