import { describe, expect, it } from 'vitest';
import { sandboxedLaunchOptions } from '../../server/src/capture/browser/chromium-launch.js';
import { FULL_CHROMIUM, HEADLESS_SHELL, isHeadlessShell } from '../../server/src/chromium-binaries.js';

describe('Chromium launch options', () => {
  it("has the wrapper exec Debian's binaries, never their launcher scripts (a script would take the parent-death signal in Chromium's place)", () => {
    expect(sandboxedLaunchOptions(FULL_CHROMIUM, '/tmp/p').env.DAGUERRE_CHROMIUM_BIN).toBe('/usr/lib/chromium/chromium');
    expect(sandboxedLaunchOptions('/usr/bin/chromium-headless-shell', '/tmp/p').env.DAGUERRE_CHROMIUM_BIN).toBe(HEADLESS_SHELL);
    expect(sandboxedLaunchOptions(HEADLESS_SHELL, '/tmp/p').env.DAGUERRE_CHROMIUM_BIN).toBe(HEADLESS_SHELL);
    expect(sandboxedLaunchOptions('/opt/chrome/chrome', '/tmp/p').env.DAGUERRE_CHROMIUM_BIN).toBe('/opt/chrome/chrome');
  });

  it('tells the headless shell, by script or binary, from the full browser', () => {
    expect(isHeadlessShell(HEADLESS_SHELL)).toBe(true);
    expect(isHeadlessShell('/usr/bin/chromium-headless-shell')).toBe(true);
    expect(isHeadlessShell(FULL_CHROMIUM)).toBe(false);
    expect(isHeadlessShell('/usr/lib/chromium/chromium')).toBe(false);
  });
});
