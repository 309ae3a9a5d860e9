import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/db/client.js';
import { SAMPLE_TOKEN } from '../src/samplefeed/server.js';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import { type SyncedDatabase, syncedDatabase } from './support/synced.js';

/** Runs the real `livefeed` process to its end. */
async function runCli(args: string[], env: Record<string, string> = {}) {
  const cli = startCli(args, env);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout.join('\n'), stderr: cli.stderr.join('\n') };
}

/** Starts `livefeed serve` and resolves with its origin once it listens. */
async function serve(args: string[]) {
  const cli = startCli(['serve', '--port', '0', ...args]);
  const listening = await cli.waitForEvent('listening');
  return { cli, origin: `http://127.0.0.1:${listening.port}` };
}

async function stop(cli: ReturnType<typeof startCli>) {
  cli.child.kill('SIGTERM');
  await cli.exited;
}

describe('one database per command; serve refuses a missing one', () => {
  let synced: SyncedDatabase;

  beforeAll(async () => {
    synced = await syncedDatabase();
  }, 60_000);
  afterAll(async () => {
    await synced?.cleanup();
  });

  it('status without a token reads <data-dir>/livefeed.db (not demo.db) and names it', async () => {
    const { code, stdout } = await runCli(['status', '--offline', '--data-dir', synced.dir]);
    expect(code, stdout).toBe(0);
    expect(stdout).toContain(`livefeed status: ${join(synced.dir, 'livefeed.db')}`);
    expect(stdout).not.toContain('nothing synced yet');
    expect(stdout).toMatch(/latest complete packet 186123/);
  });

  it('status --demo reads demo.db, and says where the demo database is when livefeed.db is absent', async () => {
    const data = await tempDir();
    try {
      copyFileSync(synced.dbPath, join(data.dir, 'demo.db'));
      const demo = await runCli(['status', '--offline', '--demo', '--data-dir', data.dir]);
      expect(demo.code, demo.stdout).toBe(0);
      expect(demo.stdout).toContain(`${join(data.dir, 'demo.db')} (demo`);
      const plain = await runCli(['status', '--offline', '--data-dir', data.dir]);
      expect(plain.code).toBe(1);
      expect(plain.stdout).toContain(`no database at ${join(data.dir, 'livefeed.db')}`);
      expect(plain.stdout).toContain('livefeed status --demo');
    } finally {
      await data.cleanup();
    }
  });

  it('serve refuses a database that does not exist: exit 2, says to sync first or pass --demo, creates nothing', async () => {
    const data = await tempDir();
    try {
      const typo = join(data.dir, 'livefed.db');
      const { code, stderr } = await runCli(['serve', '--port', '0', '--db', typo]);
      expect(code).toBe(2);
      expect(stderr).toContain(`no database at ${typo}`);
      expect(stderr).toContain('livefeed sync');
      expect(stderr).toContain('--demo');
      expect(existsSync(typo)).toBe(false);
    } finally {
      await data.cleanup();
    }
  });

  it('serve over a database no sync stored a packet in says why its answers are empty; over a synced one it does not', async () => {
    const data = await tempDir();
    try {
      const empty = join(data.dir, 'livefeed.db');
      openStore(empty).close();
      const bare = await serve(['--db', empty]);
      await stop(bare.cli);
      expect(bare.cli.events().find((e) => e.event === 'empty-database')).toMatchObject({
        level: 40,
        msg: expect.stringContaining('the database holds no packet yet'),
      });
      const full = await serve(['--db', synced.dbPath]);
      await stop(full.cli);
      expect(full.cli.events().some((e) => e.event === 'empty-database')).toBe(false);
    } finally {
      await data.cleanup();
    }
  });

  it('serve on a port another process listens on: exit 2, naming --port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const { code, stderr } = await runCli(['serve', '--port', port, '--db', synced.dbPath]);
      expect(code).toBe(2);
      expect(stderr).toContain('EADDRINUSE');
      expect(stderr).toContain('choose another with --port');
    } finally {
      taken.close();
    }
  });

  it('serve --demo serves <data-dir>/demo.db and says demo', async () => {
    const data = await tempDir();
    copyFileSync(synced.dbPath, join(data.dir, 'demo.db'));
    const { cli, origin } = await serve(['--demo', '--data-dir', data.dir]);
    try {
      const body = (await (
        await fetch(`${origin}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ service { demo } latestPacket { number } }' }),
        })
      ).json()) as { data: { service: { demo: boolean }; latestPacket: { number: number } } };
      expect(body.data).toEqual({ service: { demo: true }, latestPacket: { number: 186123 } });
    } finally {
      await stop(cli);
      await data.cleanup();
    }
  });
});

describe('exit codes and messages follow the README table', () => {
  it('an unknown flag is exit 2 (configuration)', async () => {
    const { code, stderr } = await runCli(['sync', '--no-such-flag']);
    expect(stderr).toContain("unknown option '--no-such-flag'");
    expect(code).toBe(2);
  });

  it('a missing --signing-key file is exit 2 and names the flag and file', async () => {
    const { code, stderr } = await runCli(
      [
        'sync',
        '--once',
        '--feed-url',
        'http://127.0.0.1:9/api/musicbrainz',
        '--signing-key',
        '/nonexistent/k.asc',
      ],
      { LIVEFEED_TOKEN: SAMPLE_TOKEN },
    );
    expect(code).toBe(2);
    expect(stderr).toContain('--signing-key /nonexistent/k.asc: no such file');
  });

  it('an empty or unarmored --signing-key file is exit 2 (configuration), naming the file and how to export the key', async () => {
    const data = await tempDir('lf-emptykey-');
    try {
      for (const [name, text] of [
        ['empty.asc', ''],
        ['binary.gpg', 'not an armored key'],
      ] as const) {
        const key = join(data.dir, name);
        writeFileSync(key, text);
        const { code, stderr } = await runCli(
          ['sync', '--once', '--feed-url', 'http://127.0.0.1:9/api/musicbrainz', '--signing-key', key],
          { LIVEFEED_TOKEN: SAMPLE_TOKEN },
        );
        expect(code, stderr).toBe(2);
        expect(stderr).toContain(`signing key file ${key}`);
        expect(stderr).toContain('gpg --recv-keys D5E63B4BDCCE195642948684B8FC2375C777580F');
      }
    } finally {
      await data.cleanup();
    }
  });

  it('an env error names the variable and value', async () => {
    const { code, stderr } = await runCli(['sync', '--once'], {
      LIVEFEED_TOKEN: SAMPLE_TOKEN,
      LIVEFEED_REPLICATION_PACKETS: 'no',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('LIVEFEED_REPLICATION_PACKETS=no: expected true or false');
  });

  it('--help says what each flag does', async () => {
    const { code, stdout } = await runCli(['sync', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--no-replication-packets\s+do not sync replication packets/);
  });

  it('an unreachable feed is exit 6, its own code', { timeout: 60_000 }, async () => {
    const data = await tempDir();
    try {
      // Port 9 (discard) has no listener on loopback: every connection is refused.
      const { code, stderr } = await runCli(
        ['sync', '--once', '--feed-url', 'http://127.0.0.1:9/api/musicbrainz', '--data-dir', data.dir],
        { LIVEFEED_TOKEN: SAMPLE_TOKEN },
      );
      expect(stderr).toContain('the feed is unreachable');
      expect(code).toBe(6);
    } finally {
      await data.cleanup();
    }
  });
});

/** Mounts a tmpfs at `dir` (root in a sandbox that allows it); false when not permitted. */
function mountTmpfs(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'livefeed-test', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('serve on a read-only file system (a real read-only tmpfs mount)', () => {
  let synced: SyncedDatabase;
  let mount: Awaited<ReturnType<typeof tempDir>>;
  let mounted = false;

  beforeAll(async () => {
    synced = await syncedDatabase();
    mount = await tempDir();
    mounted = mountTmpfs(mount.dir);
    if (!mounted) {
      console.warn('read-only mount test SKIPPED: mount -t tmpfs is not permitted here (needs root)');
      return;
    }
    mkdirSync(join(mount.dir, 'data'));
    // A database as a finished sync leaves it: checkpointed, no -wal or -shm beside it.
    execFileSync('sqlite3', [synced.dbPath, 'PRAGMA wal_checkpoint(TRUNCATE);']);
    copyFileSync(synced.dbPath, join(mount.dir, 'data', 'livefeed.db'));
    execFileSync('mount', ['-o', 'remount,ro', mount.dir]);
  }, 60_000);
  afterAll(async () => {
    if (mounted) execFileSync('umount', [mount.dir]);
    await mount?.cleanup();
    await synced?.cleanup();
  });

  it('serves it read-only and /ready says so; sync says "read-only file system"', async (ctx) => {
    if (!mounted) ctx.skip();
    const dataDir = join(mount.dir, 'data');
    const { cli, origin } = await serve(['--data-dir', dataDir]);
    try {
      const ready = await fetch(`${origin}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.text()).toMatch(/^ready \(read-only: read-only file system/);
      const body = (await (
        await fetch(`${origin}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ latestPacket { number } }' }),
        })
      ).json()) as { data: unknown };
      expect(body.data).toEqual({ latestPacket: { number: 186123 } });
    } finally {
      await stop(cli);
    }
    const sync = await runCli(['sync', '--once', '--demo', '--db', join(dataDir, 'livefeed.db')]);
    expect(sync.stderr).toContain('read-only file system');
    expect(sync.stderr).not.toContain('unable to open database file');
    expect(sync.code).not.toBe(0);
    const fresh = await runCli(['sync', '--once', '--demo', '--data-dir', join(mount.dir, 'new')]);
    expect(fresh.stderr).toContain('read-only file system');
    expect(fresh.stderr).not.toMatch(/ENOENT|EROFS: /);
    // Four real processes one after another (serve, two syncs): 12 s alone, over 30 s on a busy machine.
  }, 90_000);
});
