/**
 * The ways a capture ends early that the capture layer itself names. They carry no HTTP: the
 * services map them to the contract's error codes (services/capture-failures.ts).
 */

/** The capture's deadline passed during the named stage. */
export class CaptureTimeoutError extends Error {
  constructor(readonly stage: string) {
    super(`capture deadline passed while ${stage}`);
  }
}

/** The client went away: whatever was rendering for it stops. */
export class ClientGoneError extends Error {}
