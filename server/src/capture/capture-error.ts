/**
 * The ways a capture ends early that the capture layer itself names. They carry no HTTP: the
 * services map them to the contract's error codes (services/capture-failures.ts), so that capture/
 * knows nothing of statuses or codes (docs/architecture.md, "Layers of server/src").
 */

/** The capture's deadline passed during the named stage. */
export class CaptureTimeoutError extends Error {
  constructor(readonly stage: string) {
    super(`capture deadline passed while ${stage}`);
  }
}

/** The client went away: whatever was rendering for it stops. */
export class ClientGoneError extends Error {}

/**
 * Whose fault a failure is. 'input': the request itself, on this page, is refused (its options, or
 * what the target answered for good: a selector matching nothing, a protection wall, a blank page);
 * the same request fails the same way and the page is left in a known state. 'ours': the service,
 * the browser or the way to the target failed (a crash, a full queue, a target that did not answer
 * or answered an HTTP error); a retry may succeed and the page is in an unknown state.
 */
export type CaptureFault = 'input' | 'ours';

/** Every kind of CaptureError and whose fault it is: the one table the renderer and the services read. */
export const CAPTURE_ERROR_KINDS = {
  /** A selector parameter is not valid CSS. */
  'invalid-selector': { fault: 'input' },
  /** A selector parameter matched no element on the page. */
  'element-not-found': { fault: 'input' },
  /** The element of clipSelector has no size. */
  'element-not-visible': { fault: 'input' },
  /** The element of click cannot be clicked (hidden, no size). */
  'element-not-clickable': { fault: 'input' },
  /** The caller's script threw. */
  'script-failed': { fault: 'input' },
  /** The caller's script was still running when its time ran out: the page is busy (renderer.ts). */
  'script-still-running': { fault: 'input' },
  /** The destination (after a redirect, say) is not allowed by the egress policy. */
  'destination-refused': { fault: 'input' },
  /** The caller's proxy refused its credentials. */
  'proxy-refused': { fault: 'input' },
  /** The target shows an anti-bot verification page. */
  'target-protected': { fault: 'input' },
  /** With failOnHttpError, the target answered an HTTP error status. */
  'target-http-error': { fault: 'ours' },
  /** The target did not answer or does not resolve (Chromium's network error page). */
  'target-unreachable': { fault: 'ours' },
  /** The page used more memory than a renderer may (renderer-memory-watchdog.ts). */
  'over-memory': { fault: 'input' },
  /** The page's main thread stopped answering (responsiveness-watchdog.ts). */
  'page-unresponsive': { fault: 'ours' },
  /** The page's renderer crashed for a reason of its own. */
  'page-crashed': { fault: 'ours' },
  /** With failOnBlank, the capture came out blank. */
  blank: { fault: 'input' },
  /** A content format found no content on the page. */
  'no-content': { fault: 'input' },
  /** An mhtml snapshot is past its limit. */
  'content-too-large': { fault: 'input' },
  /** A WebP would pass its largest side. */
  'image-too-large': { fault: 'input' },
  /** The encoded video passed its byte limit. */
  'video-too-large': { fault: 'input' },
  /** pdfPageRanges names no page of the document. */
  'pdf-no-pages': { fault: 'input' },
  /** The pdf margins leave no room for content. */
  'pdf-no-room': { fault: 'input' },
  /** The browser produced an empty image. */
  'empty-image': { fault: 'ours' },
  /** ffmpeg failed to encode the video. */
  'encode-failed': { fault: 'ours' },
  /** Every render slot is busy and the queue is full. */
  'slots-full': { fault: 'ours' },
  /** The lane of videos or long captures is busy for longer than a synchronous request may wait. */
  'lane-busy': { fault: 'ours' },
  /** removeAds or removeCookieBanners cannot load their filters. */
  'filters-unavailable': { fault: 'ours' },
} as const satisfies Record<string, { fault: CaptureFault }>;

export type CaptureErrorKind = keyof typeof CAPTURE_ERROR_KINDS;

/** What the caller may see beside the message: each field with its valid values, or the facts (a limit, a status). */
export type CaptureErrorDetails = string | Array<{ field: string; message: string; value?: unknown }> | Record<string, unknown>;

export interface CaptureErrorFacts {
  details?: CaptureErrorDetails;
  /** For the operator's log only; never leaves the server. */
  logDetail?: unknown;
  /** When a retry may succeed (a busy instance). */
  retryAfterSeconds?: number;
  /** What was known of the target: X-Target-Status and X-Final-Url (page/target-facts.ts). */
  targetHeaders?: Record<string, string>;
}

/** A capture that ended for a reason the capture layer names; `message` is safe for the caller. */
export class CaptureError extends Error {
  readonly details: CaptureErrorDetails | undefined;
  readonly logDetail: unknown;
  readonly retryAfterSeconds: number | undefined;
  targetHeaders: Record<string, string> | undefined;

  constructor(
    readonly kind: CaptureErrorKind,
    message: string,
    facts: CaptureErrorFacts = {},
  ) {
    super(message);
    this.name = 'CaptureError';
    this.details = facts.details;
    this.logDetail = facts.logDetail;
    this.retryAfterSeconds = facts.retryAfterSeconds;
    this.targetHeaders = facts.targetHeaders;
  }

  get fault(): CaptureFault {
    return CAPTURE_ERROR_KINDS[this.kind].fault;
  }
}

/** Whether an error is a CaptureError, of one of the kinds when any are named. */
export function isCaptureError(error: unknown, ...kinds: CaptureErrorKind[]): error is CaptureError {
  return error instanceof CaptureError && (kinds.length === 0 || kinds.includes(error.kind));
}

/** The request itself is refused (CaptureFault 'input'); anything else, a timeout or a crash included, is ours. */
export const isInputFault = (error: unknown): error is CaptureError => error instanceof CaptureError && error.fault === 'input';
