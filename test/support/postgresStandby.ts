import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  chownToCluster,
  POSTGRES_TEST_PASSWORD,
  POSTGRES_TEST_USER,
  type PostgresCluster,
  psqlAt,
  runAsCluster,
  serverLife,
  startServer,
} from './postgres.js';

/** A running standby of a {@link PostgresCluster}. */
export interface PostgresStandby {
  readonly port: number;
  /** URL of `database` on the standby, with the password (the primary's user: it is replicated). */
  urlOf(database: string): string;
  /** Runs SQL on the standby (read only) through psql; returns its unaligned, tuples-only output. */
  psql(database: string, sql: string): Promise<string>;
  /** Resolves once the standby has replayed every WAL record the primary had inserted when called (commits included). */
  waitForReplay(timeoutMs?: number): Promise<void>;
  /** `pg_wal_replay_pause()`: WAL still arrives, nothing of it becomes visible until resumed. */
  pauseReplay(): Promise<void>;
  /** `pg_wal_replay_resume()`. */
  resumeReplay(): Promise<void>;
  /** Stops the standby (fast shutdown) and deletes its folder. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Takes a base backup of `primary` and starts it as a hot standby streaming from it; resolves once
 * it accepts connections and has replayed the primary's WAL as of the call.
 * @throws Error with the program's output when the backup or the server fails (the folder is removed).
 */
export async function startStandby(primary: PostgresCluster): Promise<PostgresStandby> {
  const dir = mkdtempSync(join(tmpdir(), 'livefeed-pg-standby-'));
  chownToCluster(dir);
  const data = join(dir, 'data');
  try {
    // -R writes standby.signal and primary_conninfo (the primary's socket folder and port).
    await runAsCluster('pg_basebackup', [
      ...['-h', primary.dir, '-p', String(primary.port), '-U', POSTGRES_TEST_USER],
      ...['-D', data, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ]);
    const port = await startServer(dir, data, false);
    const standby = standbyOf(primary, dir, data, port);
    await standby.waitForReplay();
    return standby;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function standbyOf(primary: PostgresCluster, dir: string, data: string, port: number): PostgresStandby {
  const psql = (database: string, sql: string) => psqlAt(dir, port, database, sql);
  return {
    port,
    urlOf: (database) =>
      `postgres://${POSTGRES_TEST_USER}:${POSTGRES_TEST_PASSWORD}@127.0.0.1:${port}/${database}`,
    psql,
    async waitForReplay(timeoutMs = 60_000) {
      // The insert position, not the write position (pg_current_wal_lsn): test clusters run with
      // synchronous_commit=off, so a commit just made may still be in the WAL buffers, past the
      // write position; waiting for the write position let a replica answer without it (seen once
      // in CI: `latestPacket` four packets behind right after this wait).
      const lsn = (await primary.psql('postgres', 'SELECT pg_current_wal_insert_lsn()')).trim();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const caughtUp = await psql('postgres', `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn`);
        if (caughtUp.trim() === 't') return;
        if (Date.now() > deadline)
          throw new Error(`the standby did not replay up to ${lsn} in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    pauseReplay: async () => void (await psql('postgres', 'SELECT pg_wal_replay_pause()')),
    resumeReplay: async () => void (await psql('postgres', 'SELECT pg_wal_replay_resume()')),
    stop: serverLife(dir, data).stop,
  };
}
