import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { lockHolder } from '../../src/db/lock.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { LockHeldError, LockLostError } from '../../src/sync/errors.js';
import { acquireWriterLock } from '../../src/sync/lock.js';
import { startSync } from '../support/cli.js';
import { tempDir, testLogger } from '../support/harness.js';

let data: Awaited<ReturnType<typeof tempDir>>;
let n = 0;

/** A fresh database. */
function freshStore(): Store {
  return openStore(join(data.dir, `lock-${++n}.db`));
}

function setHolder(store: Store, holder: { pid: number; host: string; heartbeatAt: string }): void {
  store.sqlite
    .prepare(
      'INSERT OR REPLACE INTO sync_lock (id, pid, host, acquired_at, heartbeat_at) VALUES (1, ?, ?, ?, ?)',
    )
    .run(holder.pid, holder.host, holder.heartbeatAt, holder.heartbeatAt);
}

beforeAll(async () => {
  data = await tempDir('lf-lock-');
});
afterAll(async () => {
  await data.cleanup();
});

describe('writer lock', () => {
  it('is taken, shown, and released', async () => {
    const store = freshStore();
    const lock = await acquireWriterLock(store);
    expect(lockHolder(store)).toMatchObject({ pid: process.pid, host: hostname() });
    lock.release();
    lock.release();
    expect(lockHolder(store)).toBeUndefined();
    store.close();
  });

  it('refuses a second writer, naming the holder', async () => {
    const store = freshStore();
    const other = openStore(store.path);
    const lock = await acquireWriterLock(store);
    try {
      const error = await acquireWriterLock(other).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockHeldError);
      expect((error as Error).message).toContain(`pid ${process.pid} on ${hostname()}`);
      expect((error as Error).message).toContain('--wait');
    } finally {
      lock.release();
      other.close();
      store.close();
    }
  });

  it('waits with `wait` until the holder releases', async () => {
    const store = freshStore();
    const other = openStore(store.path);
    const first = await acquireWriterLock(store);
    const logs: string[] = [];
    const second = acquireWriterLock(other, { wait: true, pollMs: 20, logger: testLogger(logs) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    first.release();
    const lock = await second;
    expect(lock.holder.pid).toBe(process.pid);
    expect(logs.some((l) => l.includes('"lock-wait"'))).toBe(true);
    lock.release();
    other.close();
    store.close();
  });

  it('stops waiting when aborted', async () => {
    const store = freshStore();
    setHolder(store, { pid: process.pid, host: hostname(), heartbeatAt: new Date().toISOString() });
    const controller = new AbortController();
    const waiting = acquireWriterLock(store, { wait: true, pollMs: 20, signal: controller.signal });
    controller.abort(new Error('stopped by SIGTERM'));
    await expect(waiting).rejects.toThrow('stopped by SIGTERM');
    store.close();
  });

  it('takes over from a holder whose heartbeat is stale', async () => {
    const store = freshStore();
    setHolder(store, {
      pid: 1,
      host: 'elsewhere',
      heartbeatAt: new Date(Date.now() - 10 * 60_000).toISOString(),
    });
    const logs: string[] = [];
    const lock = await acquireWriterLock(store, { logger: testLogger(logs) });
    expect(lockHolder(store)?.pid).toBe(process.pid);
    expect(logs.some((l) => l.includes('"lock-takeover"') && l.includes('heartbeat'))).toBe(true);
    lock.release();
    store.close();
  });

  it('leaves a live holder on another host alone while its heartbeat is fresh', async () => {
    const store = freshStore();
    setHolder(store, { pid: 1, host: 'elsewhere', heartbeatAt: new Date().toISOString() });
    await expect(acquireWriterLock(store)).rejects.toThrow(/pid 1 on elsewhere/);
    store.close();
  });

  it('takes over at once from a dead process of this host', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const pid = Number(dead.stdout.toString());
    const store = freshStore();
    setHolder(store, { pid, host: hostname(), heartbeatAt: new Date().toISOString() });
    const lock = await acquireWriterLock(store);
    expect(lockHolder(store)?.pid).toBe(process.pid);
    lock.release();
    store.close();
  });

  it('counts a database busy with a long write transaction as held', async () => {
    const store = freshStore();
    const writer = openStore(store.path);
    const contender = openStore(store.path, { busyTimeoutMs: 20 });
    setHolder(store, {
      pid: 1,
      host: 'elsewhere',
      heartbeatAt: new Date(Date.now() - 10 * 60_000).toISOString(),
    });
    writer.sqlite.exec('BEGIN IMMEDIATE');
    try {
      // Stale by its last committed heartbeat, but the writer is busy: not taken over.
      await expect(acquireWriterLock(contender)).rejects.toThrow(/pid 1 on elsewhere/);
    } finally {
      writer.sqlite.exec('ROLLBACK');
      writer.close();
      contender.close();
      store.close();
    }
  });

  it('tells its holder when another process took the lock over', async () => {
    const store = freshStore();
    const lock = await acquireWriterLock(store, { heartbeatMs: 10 });
    setHolder(store, { pid: 1, host: 'elsewhere', heartbeatAt: new Date().toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(lock.lost.aborted).toBe(true);
    expect(lock.lost.reason).toBeInstanceOf(LockLostError);
    expect(lock.lost.reason.message).toContain('another sync took it over');
    lock.release();
    // Release never deletes another holder's row.
    expect(lockHolder(store)?.host).toBe('elsewhere');
    store.close();
  });
});

describe('livefeed sync and the writer lock', () => {
  let feed: SampleFeed;
  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  });
  afterAll(async () => {
    await feed?.close();
  });

  const cliSync = (dbPath: string, ...more: string[]) =>
    startSync(feed.feedRoot, join(data.dir, 'cli'), ['--once', '--db', dbPath, ...more]);

  it('a second sync exits 5 naming the holder, or waits with --wait and then syncs', async () => {
    const dbPath = join(data.dir, 'cli.db');
    const store = openStore(dbPath);
    const held = await acquireWriterLock(store);
    try {
      const refused = cliSync(dbPath);
      expect((await refused.exited).code).toBe(5);
      expect(refused.stderr.join('\n')).toContain(
        `another sync is writing ${dbPath}: pid ${process.pid} on ${hostname()}`,
      );

      const waiting = cliSync(dbPath, '--wait');
      await waiting.waitForEvent('lock-wait');
      held.release();
      expect((await waiting.exited).code).toBe(0);
      expect(waiting.events().some((e) => e.event === 'sync-pass')).toBe(true);
      // It released the lock on the way out.
      expect(lockHolder(store)).toBeUndefined();
    } finally {
      held.release();
      store.close();
    }
  }, 60_000);
});
