import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOCKS_REPLY, SocksRefusal, startSocks5Server } from '../../server/src/security/socks5-server.js';

/** A client socket that collects what it receives and can wait for a number of bytes. */
async function client(port: number) {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  socket.on('close', () => (closed = true));
  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  return {
    socket,
    /** Writes bytes one at a time, as a slow network would deliver them. */
    async dribble(bytes: number[]) {
      for (const byte of bytes) {
        socket.write(Buffer.from([byte]));
        await new Promise((r) => setTimeout(r, 2));
      }
    },
    async read(size: number): Promise<Buffer> {
      await until(() => received.length >= size);
      const bytes = received.subarray(0, size);
      received = received.subarray(size);
      return bytes;
    },
    async closedByPeer(): Promise<boolean> {
      await until(() => closed);
      return closed;
    },
  };
}

const greeting = [0x05, 0x01, 0x00];
const connectByName = (name: string, port: number) => [0x05, 0x01, 0x00, 0x03, name.length, ...Buffer.from(name), port >> 8, port & 0xff];

describe('SOCKS5 server (the egress proxy Chromium connects through)', () => {
  let echo: Server;
  let echoPort: number;
  let proxy: Server;
  let proxyPort: number;
  const asked: Array<{ host: string; port: number }> = [];
  const refused: string[] = [];

  beforeAll(async () => {
    echo = createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as AddressInfo).port;
    proxy = await startSocks5Server(
      async (host, port) => {
        asked.push({ host, port });
        if (host === 'refused.test') throw new SocksRefusal(SOCKS_REPLY.notAllowed, 'not allowed');
        const upstream = connect({ host: '127.0.0.1', port: echoPort });
        await new Promise<void>((resolve) => upstream.once('connect', resolve));
        return upstream as Socket;
      },
      (destination) => refused.push(destination),
    );
    proxyPort = (proxy.address() as AddressInfo).port;
  });

  afterAll(async () => {
    proxy.close();
    echo.close();
  });

  it('connects a name it was given (never an address the client resolved) and carries bytes both ways', async () => {
    const c = await client(proxyPort);
    // Sent one byte at a time, the tunnel's first bytes right behind the request.
    await c.dribble([...greeting, ...connectByName('allowed.test', 8080)]);
    expect([...(await c.read(2))]).toEqual([0x05, 0x00]);
    expect((await c.read(10))[1]).toBe(SOCKS_REPLY.succeeded);
    expect(asked.at(-1)).toEqual({ host: 'allowed.test', port: 8080 });
    c.socket.write('GET / HTTP/1.1\r\n\r\n');
    expect((await c.read(18)).toString()).toBe('GET / HTTP/1.1\r\n\r\n');
    c.socket.destroy();
  });

  it('answers a refused destination with "not allowed by ruleset" and reports it', async () => {
    const c = await client(proxyPort);
    c.socket.write(Buffer.from([...greeting, ...connectByName('refused.test', 443)]));
    await c.read(2);
    expect((await c.read(10))[1]).toBe(SOCKS_REPLY.notAllowed);
    expect(await c.closedByPeer()).toBe(true);
    expect(refused).toContain('refused.test:443');
  });

  it('gives an IPv6 destination in its short form, as a URL names it', async () => {
    const c = await client(proxyPort);
    const loopback6 = [...Array(15).fill(0), 1];
    c.socket.write(Buffer.from([...greeting, 0x05, 0x01, 0x00, 0x04, ...loopback6, 0x01, 0xbb]));
    await c.read(12);
    expect(asked.at(-1)).toEqual({ host: '::1', port: 443 });
    c.socket.destroy();
  });

  it('refuses commands other than CONNECT and clients that offer no method without authentication', async () => {
    const bind = await client(proxyPort);
    bind.socket.write(Buffer.from([...greeting, 0x05, 0x02, 0x00, 0x01, 127, 0, 0, 1, 0, 80]));
    await bind.read(2);
    expect((await bind.read(10))[1]).toBe(SOCKS_REPLY.commandNotSupported);

    const before = asked.length;
    const passwordOnly = await client(proxyPort);
    passwordOnly.socket.write(Buffer.from([0x05, 0x01, 0x02]));
    expect([...(await passwordOnly.read(2))]).toEqual([0x05, 0xff]);
    expect(await passwordOnly.closedByPeer()).toBe(true);
    expect(asked.length).toBe(before);
  });
});
