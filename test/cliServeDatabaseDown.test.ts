import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CliProcess, startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import {
  describePostgres,
  POSTGRES_TEST_PASSWORD,
  type PostgresCluster,
  startPostgres,
} from './support/postgres.js';

/**
 * A `serve` over PostgreSQL while its server is stopped and started again (an operator's restart):
 * the operations endpoints and the mirror say the database does not answer, with the statuses a
 * monitor and a livefeed reading the mirror act on (503, never a bare 500), and answer as before
 * once the server is back.
 */

async function get(
  origin: string,
  path: string,
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const response = await fetch(`${origin}${path}`);
  return {
    status: response.status,
    text: await response.text(),
    retryAfter: response.headers.get('retry-after'),
  };
}

describePostgres('serve while PostgreSQL is down', () => {
  let cluster: PostgresCluster | undefined;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let url: string;

  beforeAll(async () => {
    cluster = await startPostgres();
    data = await tempDir('pg-serve-down-');
    url = (await cluster.createDatabase('serve_down')).url;
    const sync = startCli(['sync', '--demo', '--once', '--db', url, '--data-dir', data.dir]);
    expect((await sync.exited).code, sync.stderr.join('\n')).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await data?.cleanup();
  });

  it('answers 503 with the reason on /freshness, /metrics and the mirror, then recovers', async () => {
    const serve: CliProcess = startCli([
      'serve',
      '--demo',
      '--port',
      '0',
      '--db',
      url,
      '--data-dir',
      data.dir,
    ]);
    try {
      const listening = await serve.waitForEvent('listening');
      const origin = `http://127.0.0.1:${listening.port as number}`;
      const info = '/api/musicbrainz/replication-info';
      expect((await get(origin, info)).status).toBe(200);
      expect((await get(origin, '/metrics')).status).toBe(200);
      await cluster!.interrupt(async () => {
        const freshness = await get(origin, '/freshness');
        expect(freshness.status).toBe(503);
        expect(freshness.text).toBe('CRITICAL: cannot read the database: it does not answer (see the log)\n');
        const json = JSON.parse((await get(origin, '/freshness?format=json')).text) as { level: string };
        expect(json.level).toBe('CRITICAL');
        const metrics = await get(origin, '/metrics');
        expect([metrics.status, metrics.text]).toEqual([
          503,
          expect.stringMatching(/^cannot read the database: /),
        ]);
        const mirror = await get(origin, info);
        expect(mirror.status).toBe(503);
        expect(mirror.retryAfter).toBe('60');
        expect(mirror.text).toBe(
          "replication-info cannot be answered now: this server's database does not answer; ask again later.\n",
        );
        expect((await get(origin, '/ready')).status).toBe(503);
      });
      // Each 503 was logged once, with its route.
      const unanswered = serve.events().filter((e) => e.event === 'http-unanswered');
      expect(unanswered.map((e) => e.path)).toEqual(['/freshness', '/freshness', '/metrics', '/api/']);
      // The server's address is in the log only.
      expect(unanswered.every((e) => /ECONNREFUSED|terminat|shut/i.test(String(e.err)))).toBe(true);
      // Back: the pool opens new connections by itself.
      const back = await get(origin, info);
      expect(back.status).toBe(200);
      expect((await get(origin, '/metrics')).status).toBe(200);
      expect((await get(origin, '/freshness')).text).not.toMatch(/cannot read the database/);
    } finally {
      serve.child.kill('SIGTERM');
      const exit = await serve.exited;
      expect(exit.code, serve.stderr.join('\n')).toBe(0);
      expect(serve.stderr.join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
    }
  }, 90_000);
});
