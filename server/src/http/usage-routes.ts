import type { Response } from 'express';
import type { UsageService } from '../services/usage-service.js';
import { contextOf } from './request-context.js';

export function usageHandler(service: UsageService) {
  return async ({ res }: { res: Response }) => ({ status: 200 as const, body: await service.report(contextOf(res).auth!) });
}
