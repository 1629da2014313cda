import pino, { type Logger } from 'pino';
import { isSecretName, maskUserinfo } from './security/redaction.js';

/** Paths whose values never reach a log line (issue: secrets in query strings and headers). */
export const REDACTED_PATHS = [
  'req.query.apiKey',
  'req.query.signature',
  'req.query.openaiApiKey',
  'req.query.proxyPassword',
  'req.query.requestStorageSecretAccessKey',
  'req.query.requestStorageAccessKeyId',
  'req.query.proxyUsername',
  // Custom headers may carry tokens: they are never stored (docs/security.md).
  'req.query.headers',
  'req.headers["x-api-key"]',
  'req.headers["x-openai-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'options.apiKey',
  'options.signature',
  'signingSecret',
  '*.signingSecret',
  'options.openaiApiKey',
  'options.proxyPassword',
  'options.requestStorageSecretAccessKey',
  'options.requestStorageAccessKeyId',
  'options.proxyUsername',
  'options.headers',
];

// Query redaction works on decoded names and masks URL credentials (docs/containment.md).
export { redactUrl } from './security/redaction.js';

const MASK = '[REDACTED]';
/** Names that read like secrets but name an identifier the operator needs (an API key's id). */
const NOT_SECRET = new Set(['keyId']);

/**
 * Every log line's own fields, judged by meaning (docs/containment.md, "Secrets redacted by
 * meaning"): a member whose name looks like a key, token, secret, password or signature is masked
 * whatever its spelling, and strings lose URL credentials and key-shaped values. Only plain objects
 * and arrays are walked (never a request or an Error, which have serializers), to a bounded depth.
 */
function redactByMeaning(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return maskUserinfo(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactByMeaning(item, depth + 1));
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    out[name] =
      !NOT_SECRET.has(name) && isSecretName(name) && member !== undefined && member !== null ? MASK : redactByMeaning(member, depth + 1);
  }
  return out;
}

/** Errors keep their stack for the operator, without URL credentials or key-shaped values in it. */
function errorSerializer(error: Error): unknown {
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  return redactByMeaning({ ...serialized }, 0);
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: MASK },
      base: { service: 'daguerre' },
      serializers: { err: errorSerializer },
      formatters: { log: (object) => redactByMeaning(object, 0) as Record<string, unknown> },
    },
    destination,
  );
}
