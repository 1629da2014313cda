import { z } from 'zod';

/** A parameter that must be an absolute http:// or https:// URL: the page to capture, a proxy, a storage endpoint. */
export const httpUrl = (field: string, max: number) =>
  z
    .string({ errorMap: () => ({ message: `${field} must be a string` }) })
    .max(max, `${field} must be at most ${max} characters`)
    .refine((value) => {
      try {
        const parsed = new URL(value);
        return parsed.protocol === 'http:' || parsed.protocol === 'https:';
      } catch {
        return false;
      }
    }, `${field} must be an absolute http:// or https:// URL`);
