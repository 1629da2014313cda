/** What an async job's record is, and how a `capture_jobs` row reads as one. */
import { numberOrNull } from './database.js';

/** Where a job is: queued → active → succeeded | failed. */
export type JobState = 'queued' | 'active' | 'succeeded' | 'failed';

/** How a webhook (a job's or a batch's) ended; its `webhook_state` moves pending → queued → one of these. */
export type WebhookOutcome = 'delivered' | 'gave_up';

/** Where a succeeded job's file lives. */
export type JobFileLocation = { where: 'results'; key: string } | { where: 'organization-storage'; configName: string; key: string };

/** What a succeeded job produced (the `result` column, JSON). */
export interface JobResult {
  requestId: string;
  fileName: string;
  fileSize: number;
  processingTime: number;
  mime: string;
  storageUrl?: string;
  aiResult?: { text: string; model: string; data?: Record<string, unknown> };
  page?: unknown;
  quality?: unknown;
  metadata?: unknown;
  file: JobFileLocation;
}

/** A job's record: the one source of truth for its status, its file and its charge. */
export interface JobRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  status: JobState;
  priority: number;
  /** The job's payload without its secrets (JSON), so a job lost with Redis can be queued again. */
  payload: string;
  hasSecrets: boolean;
  /** The queue entry was made and the caller told: false for a record whose POST died half-way. */
  enqueued: boolean;
  attempts: number;
  leaseToken: string | null;
  leaseUntil: number | null;
  result?: JobResult;
  error?: { code: string; message: string };
  creditsCharged: number;
  webhookUrl: string | null;
  webhookState: string | null;
  baseUrl: string;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  expiresAt: number | null;
}

export interface NewJob {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  payload: string;
  hasSecrets: boolean;
  webhookUrl?: string;
  baseUrl: string;
  /** The plan's fair-share weight: jobs of the organization per round of the fair queue (default 1). */
  weight?: number;
}

/** A `capture_jobs` row as the job's record (timestamps as numbers, `result` parsed). */
export function toJobRecord(row: Record<string, unknown>): JobRecord {
  const record: JobRecord = {
    id: row.id as string,
    organizationId: row.organization_id as string,
    apiKeyId: (row.api_key_id as string | null) ?? null,
    status: row.status as JobState,
    priority: Number(row.priority),
    payload: row.payload as string,
    hasSecrets: Boolean(row.has_secrets),
    enqueued: Boolean(row.enqueued),
    attempts: Number(row.attempts),
    leaseToken: (row.lease_token as string | null) ?? null,
    leaseUntil: numberOrNull(row.lease_until),
    creditsCharged: Number(row.credits_charged),
    webhookUrl: (row.webhook_url as string | null) ?? null,
    webhookState: (row.webhook_state as string | null) ?? null,
    baseUrl: row.base_url as string,
    createdAt: Number(row.created_at),
    startedAt: numberOrNull(row.started_at),
    finishedAt: numberOrNull(row.finished_at),
    expiresAt: numberOrNull(row.expires_at),
  };
  if (row.result) record.result = JSON.parse(row.result as string) as JobResult;
  if (row.error_code) record.error = { code: row.error_code as string, message: (row.error_message as string) ?? '' };
  return record;
}
