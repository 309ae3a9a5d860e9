/**
 * A streaming replica (hot standby) of a throw-away cluster (test/support/postgres.ts), for the
 * read replica tests (issue 17, step 9): `pg_basebackup -R` of the primary into a new temporary
 * folder (over the primary's Unix socket, where the cluster's user replicates without a password),
 * then `postgres` on another free loopback port with the same user and password as the primary.
 * PostgreSQL 15's defaults stream already (`wal_level=replica`, `max_wal_senders=10`, initdb's
 * `local replication` rule), so the primary needs no change. Kept apart from postgres.ts, which
 * is near the 300-line limit.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  chownToCluster,
  POSTGRES_CLUSTER_OWNER,
  POSTGRES_TEST_PASSWORD,
  POSTGRES_TEST_USER,
  type PostgresCluster,
  postgresProgram,
  runAsCluster,
  startServer,
} from './postgres.js';

/** A running standby of a {@link PostgresCluster}. */
export interface PostgresStandby {
  readonly port: number;
  /** URL of `database` on the standby, with the password (the primary's user: it is replicated). */
  urlOf(database: string): string;
  /** Runs SQL on the standby (read only) through psql; returns its unaligned, tuples-only output. */
  psql(database: string, sql: string): Promise<string>;
  /** Resolves once the standby has replayed everything the primary had written when called. */
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

function psqlAt(dir: string, port: number, database: string, sql: string): Promise<string> {
  return runAsCluster('psql', [
    ...['-h', dir, '-p', String(port), '-U', POSTGRES_TEST_USER, '-d', database],
    ...['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
  ]);
}

function standbyOf(primary: PostgresCluster, dir: string, data: string, port: number): PostgresStandby {
  let stopped = false;
  const stopAtExit = () => {
    if (stopped) return;
    try {
      const args = ['-D', data, '-m', 'immediate', 'stop'];
      const [cmd, argv] =
        process.getuid?.() === 0
          ? ['runuser', ['-u', POSTGRES_CLUSTER_OWNER, '--', postgresProgram('pg_ctl'), ...args]]
          : [postgresProgram('pg_ctl'), args];
      execFileSync(cmd, argv, { stdio: 'ignore' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', stopAtExit);
  const psql = (database: string, sql: string) => psqlAt(dir, port, database, sql);
  return {
    port,
    urlOf: (database) =>
      `postgres://${POSTGRES_TEST_USER}:${POSTGRES_TEST_PASSWORD}@127.0.0.1:${port}/${database}`,
    psql,
    async waitForReplay(timeoutMs = 60_000) {
      const lsn = (await primary.psql('postgres', 'SELECT pg_current_wal_lsn()')).trim();
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
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stopAtExit);
      try {
        await runAsCluster('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
