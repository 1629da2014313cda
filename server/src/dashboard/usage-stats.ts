import type { CreditRepository } from '../store/credit-repository.js';
import { numberOrNull } from '../store/database.js';

export interface LedgerRow {
  requestId: string;
  apiKeyId: string | null;
  status: string;
  format: string;
  source: string;
  /** `async` for a job of POST /captures. */
  mode: 'sync' | 'async';
  targetHost: string | null;
  credits: number;
  processingMs: number | null;
  fileSize: number | null;
  errorCode: string | null;
  createdAt: number;
}

/** The ledger's newest rows, typed for the usage page. */
export async function latestCaptures(credits: CreditRepository, organizationId: string, limit = 20): Promise<LedgerRow[]> {
  const rows = await credits.ledger(organizationId, limit);
  return rows.map((row) => ({
    requestId: row.request_id,
    apiKeyId: row.api_key_id,
    status: row.status,
    format: row.format,
    source: row.source,
    mode: row.mode === 'async' ? 'async' : 'sync',
    targetHost: row.target_host,
    credits: Number(row.credits),
    processingMs: numberOrNull(row.processing_ms),
    fileSize: numberOrNull(row.file_size),
    errorCode: row.error_code,
    createdAt: Number(row.created_at),
  }));
}
