import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { coalescePipeWrites } from '../../server/src/capture/browser/devtools-pipe-writes.js';

/** A real child with a pipe on fd 3, as Chromium has with --remote-debugging-pipe: it echoes fd 3 to its stdout. */
function echoOnFd3(): ChildProcess {
  return spawn(process.execPath, ['-e', "new (require('node:net').Socket)({ fd: 3 }).pipe(process.stdout)"], {
    stdio: ['ignore', 'pipe', 'inherit', 'pipe'],
  });
}

describe('coalescePipeWrites', () => {
  it("sends a tick's messages and terminators in one system call, in order, and later ticks on their own", async () => {
    const child = echoOnFd3();
    const pipe = child.stdio[3] as import('node:net').Socket;
    const calls: number[] = [];
    // What reaches the kernel: one _writev (or _write) per system call.
    const writev = pipe._writev!.bind(pipe);
    pipe._writev = (chunks, callback) => {
      calls.push(chunks.length);
      writev(chunks, callback);
    };
    const write = pipe._write.bind(pipe);
    pipe._write = (chunk, encoding, callback) => {
      calls.push(1);
      write(chunk, encoding, callback);
    };
    coalescePipeWrites(child);
    let echoed = '';
    child.stdout!.on('data', (data: Buffer) => (echoed += data.toString('utf8')));

    for (const message of ['{"id":1}', '{"id":2}']) {
      pipe.write(message);
      pipe.write('\0');
    }
    await new Promise((done) => setImmediate(done));
    pipe.write('{"id":3}');
    pipe.write('\0');
    await new Promise((done) => setImmediate(done));
    pipe.end();
    await new Promise((done) => child.once('close', done));

    expect(calls).toEqual([4, 2]);
    expect(echoed).toBe('{"id":1}\0{"id":2}\0{"id":3}\0');
  });

  it('leaves a process without a pipe on fd 3 alone', () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    expect(() => coalescePipeWrites(child)).not.toThrow();
    expect(() => coalescePipeWrites(null)).not.toThrow();
  });
});
