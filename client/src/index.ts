export { createClient } from './create-client.js';
export type { CaptureFile } from './capture-file.js';
export type { CaptureLogFilters, ClientOptions, DaguerreClient } from './daguerre-client.js';
export type { RawClient } from './raw-client.js';
export { DaguerreError } from './daguerre-error.js';
export type { ErrorDetails } from './daguerre-error.js';
export type { RetryOptions } from './retry.js';
export type { SignedUrlOptions } from './signed-url.js';
export { HTML_QUERY_MAX_LENGTH } from './capture-request.js';
export type { CaptureInput, CaptureRequest } from './capture-request.js';
export { verifyWebhook, WebhookVerificationError } from './webhooks.js';
export { WaitTimeoutError } from './async-captures.js';
export type { WebhookEvent, WebhookEventType, WebhookHeaders } from './webhooks.js';
export type { ListRunsOptions, MonitorMethods, MonitorRunPage, UpdateMonitorInput } from './monitors.js';
export type { AsyncCaptureRequest, WaitOptions } from './async-captures.js';
export type { BulkCaptureRequest } from './bulk-captures.js';

// Contract values and types a caller needs, re-exported so that only this package is imported.
export { DEVICE_PRESETS, ERROR_CODES, FORMATS, MIME_TYPES, MONITOR_EVENT_TYPES, contract } from '@daguerre/contract';
export type {
  CaptureFormat,
  AsyncCaptureAccepted,
  BatchData,
  BatchItem,
  BatchWebhookEvent,
  CaptureJobData,
  CaptureKind,
  CaptureLogPage,
  CaptureResult,
  LoggedCapture,
  LoggedCaptureStatus,
  CaptureWebhookEvent,
  Contract,
  DeviceId,
  DeviceName,
  ErrorBody,
  ErrorCode,
  UsageReport,
  ValidationIssue,
  WebhookAttempt,
  WebhookEventLog,
} from '@daguerre/contract';
export type {
  CaptureDiff,
  ChangedRegion,
  CreateMonitorInput,
  Monitor,
  MonitorEventType,
  MonitorRun,
  MonitorRunStatus,
  MonitorWebhookEvent,
} from '@daguerre/contract';
export type { DiffInput, DiffResponse } from '@daguerre/contract';
