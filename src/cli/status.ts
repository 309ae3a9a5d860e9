import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { openStore } from '../db/client.js';
import { type Reads, sqliteReads } from '../db/reads.js';
import { safeMessage } from '../feed/errors.js';
import { redactUrl } from '../feed/protocol/urls.js';
import { collectStatus, renderStatus, type UpstreamAnswer } from '../ops/statusReport.js';
import { BUNDLED_FEED_ROOT } from '../samplefeed/bundled.js';
import { findLastPacket } from '../samplefeed/lastPacket.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';
import { chooseDatabase, choosePostgres, feedClient, type PostgresChoice } from './targets.js';

async function askUpstream(config: Config, demo: boolean, offline: boolean): Promise<UpstreamAnswer> {
  if (offline) return { kind: 'not-asked', reason: '--offline' };
  if (demo)
    return {
      kind: 'asked',
      latest: await findLastPacket(BUNDLED_FEED_ROOT),
      where: 'the bundled sample feed',
    };
  const client = feedClient({ feedRoot: config.feedUrl, token: config.token }, 'status');
  const where = redactUrl(config.feedUrl);
  try {
    return { kind: 'asked', latest: await client.replicationInfo(), where };
  } catch (error) {
    return { kind: 'failed', reason: safeMessage(error, config.token), where };
  } finally {
    await client.close();
  }
}

type Thresholds = { warningMs: number; criticalMs: number };

const thresholdsOf = (config: Config): Thresholds => ({
  warningMs: config.freshnessWarningMs,
  criticalMs: config.freshnessCriticalMs,
});

/**
 * The status of a PostgreSQL database (issue 17): opened by a pool of two connections (pending
 * migrations applied, as every command opens it, but a database without livefeed's tables is left
 * without them: exit 1); the demo's when `--demo` is given or a demo sync marked it.
 * @throws Error naming the database (never its password) when it cannot be opened or read.
 */
async function postgresStatus(config: Config, offline: boolean, demoFlag: boolean, choice: PostgresChoice) {
  const { openPostgresStore, NoTablesError } = await import('../db/postgres/client.js');
  const { postgresReads } = await import('../db/postgres/reads.js');
  const store = await openPostgresStore(choice.connection, {
    maxConnections: 2,
    applicationName: 'livefeed status',
    existing: true,
  }).catch((error: unknown) => {
    if (!(error instanceof NoTablesError)) throw error;
    return undefined;
  });
  if (!store) {
    // As a SQLite file not there yet: no tables are created by a command that only reads.
    process.stdout.write(
      `livefeed status: no livefeed tables in ${choice.connection.display}: nothing synced yet (run livefeed start or sync with this --db)\n`,
    );
    return EXIT.nothingSynced;
  }
  try {
    const reads = postgresReads(store);
    const demo = demoFlag || (await reads.demo());
    const upstream = await askUpstream(config, demo, offline);
    return await printStatus(config, reads, { display: store.display, demo, upstream });
  } finally {
    await store.close();
  }
}

/** Prints the status screen of the database `reads` reads (named `display`) on stdout; exit 0. */
async function printStatus(
  config: Config,
  reads: Reads,
  facts: { display: string; demo: boolean; upstream: UpstreamAnswer },
): Promise<number> {
  const status = await collectStatus(reads, { ...facts, thresholds: thresholdsOf(config) });
  process.stdout.write(`${renderStatus(status, process.stdout.columns || 100)}\n`);
  return EXIT.ok;
}

/**
 * `livefeed status`: prints the screen on stdout, naming the database it reads (the demo's only
 * with `--demo`; a PostgreSQL database by its URL without password). Asks upstream's
 * `replication-info` once (unless `--offline`); the database is only read. Exit 0, or 1 when there
 * is no SQLite database yet or the PostgreSQL database holds no livefeed tables.
 */
export const statusCommand: CommandImplementation = {
  async run({ config, flags }) {
    const postgres = choosePostgres(config);
    if (postgres) return postgresStatus(config, !!flags.offline, !!flags.demo, postgres);
    // The same database the other commands use: the demo's only with --demo.
    const { path: dbPath, demo } = chooseDatabase('status', config, flags);
    if (!existsSync(dbPath)) {
      const demoDb = chooseDatabase('status', config, { ...flags, demo: true }).path;
      const hint =
        !demo && existsSync(demoDb) ? ` (the demo's database is ${demoDb}: livefeed status --demo)` : '';
      process.stdout.write(
        `livefeed status: no database at ${dbPath}: nothing synced yet (run livefeed start or sync)${hint}\n`,
      );
      return EXIT.nothingSynced;
    }
    const upstream = await askUpstream(config, demo, !!flags.offline);
    const store = openStore(dbPath, { readonly: true });
    try {
      return await printStatus(config, sqliteReads(store), { display: store.path, demo, upstream });
    } finally {
      store.close();
    }
  },
};
