import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * puppeteer writes each DevTools message to Chromium's pipe (fd 3, --remote-debugging-pipe) as two
 * writes, the JSON and then its '\0' terminator, and a capture sends about 40 messages: each write
 * is a system call that wakes Chromium's reader, and at four clients they were about 4 ms of the
 * service's own CPU a capture (profiled: `writeUtf8String` under puppeteer's PipeTransport.send).
 * Corked until the end of the current tick, everything written in that tick (a message with its
 * terminator, and the several messages a stage sends at once) leaves in one writev, in order.
 * A message waits no longer than the rest of the tick that sent it.
 */
export function coalescePipeWrites(chromium: ChildProcess | null): void {
  const pipe = chromium?.stdio[3] as Writable | null | undefined;
  if (!pipe || typeof pipe.cork !== 'function') return;
  const write = pipe.write.bind(pipe) as (...args: unknown[]) => boolean;
  pipe.write = ((...args: unknown[]) => {
    if (pipe.writableCorked === 0) {
      pipe.cork();
      process.nextTick(() => pipe.uncork());
    }
    return write(...args);
  }) as Writable['write'];
}
