import { CaptureQuerySchema } from '@daguerre/contract';
import { describe, expect, it } from 'vitest';

const fieldsOf = (query: Record<string, string>) => {
  const result = CaptureQuerySchema.safeParse({ url: 'https://a.example', ...query });
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
};

describe('the viewport × scaleFactor pixel rule', () => {
  it('blames only the field whose own range was broken (viewportWidth=99999 is not a scaleFactor problem)', () => {
    expect(fieldsOf({ viewportWidth: '99999' })).toEqual(['viewportWidth']);
    expect(fieldsOf({ scaleFactor: '9' })).toEqual(['scaleFactor']);
  });

  it('still refuses values each in range whose product is too many pixels', () => {
    expect(fieldsOf({ viewportWidth: '7680', viewportHeight: '7680' })).toEqual(['scaleFactor']);
    expect(fieldsOf({ viewportWidth: '1920', viewportHeight: '1080', scaleFactor: '2' })).toEqual([]);
  });
});
