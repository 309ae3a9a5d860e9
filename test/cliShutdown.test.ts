import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';

function walSize(db: string): number {
  try {
    return statSync(`${db}-wal`).size;
  } catch {
    return 0;
  }
}

describe('follow mode stops promptly; the WAL does not stay large; /proc fails fast (real processes)', () => {
  it('SIGTERM stops `start` within a second while a browser page and a subscription are open, after the WAL was truncated', {
    timeout: 120_000,
  }, async () => {
    const data = await tempDir();
    const cli = startCli(['start', '--data-dir', data.dir, '--port', '0', '--log-level', 'debug']);
    try {
      const { port } = await cli.waitForEvent('listening');
      // The end-of-pass checkpoint copied the pass's WAL into the database and truncated the file.
      await cli.waitUntil(
        (events) => events.some((e) => e.event === 'checkpoint' && e.truncated === true),
        'the end-of-pass checkpoint',
      );
      const checkpointed = cli.events().find((e) => e.event === 'checkpoint')!;
      expect(checkpointed.walFrames as number).toBeGreaterThan(0);
      expect(walSize(join(data.dir, 'demo.db'))).toBe(0);

      const origin = `http://127.0.0.1:${port}`;
      // A browser opening GraphiQL (a compressed 9 MB page) and an open server-sent events stream.
      const page = await fetch(`${origin}/graphql`, {
        headers: { accept: 'text/html', 'accept-encoding': 'br' },
      });
      expect(page.status).toBe(200);
      const stream = await fetch(
        `${origin}/graphql?query=${encodeURIComponent('subscription { packetSynced { number } }')}`,
        {
          headers: { accept: 'text/event-stream' },
        },
      );
      expect(stream.status).toBe(200);
      // The sync is asleep until its next poll (300 s): SIGTERM must end that sleep, not wait it out.
      const sent = performance.now();
      cli.child.kill('SIGTERM');
      const { code } = await cli.exited;
      const ms = performance.now() - sent;
      expect(code).toBe(0);
      expect(cli.events().some((e) => e.event === 'shutdown' && e.signal === 'SIGTERM')).toBe(true);
      // README: "SIGINT/SIGTERM stop follow mode within a second" (before: 1.6 to 2.6 s).
      expect(ms).toBeLessThan(1000);
      await stream.body?.cancel().catch(() => {});
    } finally {
      cli.child.kill('SIGKILL');
      await data.cleanup();
    }
  });

  it('--data-dir under /proc fails at once with exit 2 naming the kernel file system', {
    timeout: 60_000,
  }, async () => {
    const cli = startCli(['sync', '--demo', '--once', '--data-dir', '/proc/livefeed-test/data']);
    const { code } = await cli.exited;
    const stderr = cli.stderr.join('\n');
    expect(stderr).toContain('cannot keep database /proc/livefeed-test/data/demo.db under /proc');
    expect(stderr).toContain('proc, a kernel file system');
    expect(code).toBe(2);
  });
});
