import { CaptureBodySchema } from '@daguerre/contract';
import { z } from 'zod';

/** The field names of the contract's POST /capture JSON body, read from the schema itself. */
export function captureBodyFieldNames(): string[] {
  let schema: z.ZodTypeAny = CaptureBodySchema;
  while (schema instanceof z.ZodEffects) schema = schema.innerType();
  return Object.keys((schema as z.AnyZodObject).shape);
}
