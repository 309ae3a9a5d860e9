import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

describe('requests the schema cannot serve do not flood the log (real livefeed serve)', () => {
  let synced: SyncedDatabase;

  beforeAll(async () => {
    synced = await syncedDatabase();
  }, 60_000);
  afterAll(async () => {
    await synced?.cleanup();
  });

  it('a mutation, a subscription field that does not exist and NOT_FOUND: one JSON line each at debug, no stack trace', async () => {
    const cli = startCli(['serve', '--port', '0', '--data-dir', synced.dir, '--log-level', 'debug']);
    try {
      const { port } = await cli.waitForEvent('listening');
      const post = async (query: string) =>
        (await (
          await fetch(`http://127.0.0.1:${port}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query }),
          })
        ).json()) as { errors?: { extensions?: { code?: string } }[] };
      for (let i = 0; i < 3; i++) {
        const answer = await post('mutation { deleteEverything }');
        expect(answer.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      }
      await post('subscription { nope }');
      await post('{ changes(packet: 186099, entity: ARTIST) { totalCount } }');
      await cli.waitUntil(
        (events) => events.filter((e) => e.event === 'graphql-client-error').length >= 5,
        'five client errors logged',
      );
      cli.child.kill('SIGTERM');
      await cli.exited;
      const lines = cli.stderr.filter(Boolean);
      // Every line is one JSON object: no multi-line error dump, no stack frames.
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(lines.join('\n')).not.toMatch(/\n\s+at |graphql-jit/);
      const logged = cli.events().filter((e) => e.event === 'graphql-client-error');
      expect(logged.every((e) => e.level === 20)).toBe(true);
      expect(logged.map((e) => e.code)).toEqual([
        'BAD_USER_INPUT',
        'BAD_USER_INPUT',
        'BAD_USER_INPUT',
        'GRAPHQL_VALIDATION_FAILED',
        'NOT_FOUND',
      ]);
    } finally {
      cli.child.kill('SIGKILL');
    }
  });
});
