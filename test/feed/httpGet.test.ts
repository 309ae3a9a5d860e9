import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text as readText } from 'node:stream/consumers';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Agents,
  closeAgents,
  createAgents,
  drain,
  HttpTimeoutError,
  httpGet,
} from '../../src/feed/httpGet.js';

/** The feed client's transport (src/feed/httpGet.ts) against a real HTTP server on port 0. */
describe('httpGet', () => {
  let server: Server | undefined;
  let agents: Agents | undefined;
  afterEach(async () => {
    if (agents) closeAgents(agents);
    server?.closeAllConnections();
    if (server) await new Promise((resolve) => server!.close(resolve));
    server = agents = undefined;
  });

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<URL> {
    server = createServer(handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/file`);
  }
  const options = (overrides: { idleTimeoutMs?: number; signal?: AbortSignal } = {}) => {
    agents ??= createAgents();
    return {
      agents,
      headers: { 'user-agent': 'test' },
      connectTimeoutMs: 2000,
      idleTimeoutMs: 2000,
      ...overrides,
    };
  };

  it('gives the status, head and body, and keeps one connection for requests in turn', async () => {
    const sockets = new Set<unknown>();
    const url = await serve((req, res) => {
      sockets.add(req.socket);
      res.setHeader('x-seen', String(req.headers['user-agent']));
      res.end('hello');
    });
    for (let i = 0; i < 3; i++) {
      // Longer apart than the idle timeout: a finished request's timer must not reach the next one.
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 300));
      const res = await httpGet(url, options({ idleTimeoutMs: 200 }));
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-seen']).toBe('test');
      expect(await readText(res.body)).toBe('hello');
    }
    expect(sockets.size).toBe(1);
  });

  it('fails with an idle timeout when the head does not come, and when the body stalls', async () => {
    let url = await serve(() => {});
    await expect(httpGet(url, options({ idleTimeoutMs: 200 }))).rejects.toThrow(HttpTimeoutError);
    await expect(httpGet(url, options({ idleTimeoutMs: 200 }))).rejects.toThrow(/idle timeout: .* 200 ms/);
    closeAgents(agents!);
    agents = undefined;
    server!.closeAllConnections();
    server!.close();
    url = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '10' });
      res.write('half');
    });
    const res = await httpGet(url, options({ idleTimeoutMs: 200 }));
    await expect(readText(res.body)).rejects.toThrow(/idle timeout: no data from the feed for 200 ms/);
  });

  it('fails the body when the server cuts it short, and stops at an abort', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/file') {
        res.writeHead(200, { 'content-length': '10' });
        res.write('half', () => req.socket.destroy());
      }
    });
    const res = await httpGet(url, options());
    await expect(drain(res.body)).rejects.toThrow();
    const stop = new AbortController();
    const pending = httpGet(new URL('/never', url), options({ signal: stop.signal }));
    stop.abort();
    await expect(pending).rejects.toThrow(/abort/i);
  });
});
