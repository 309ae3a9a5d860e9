import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replicaConnections } from '../../src/config/databaseUrl.js';
import { ConfigError, databaseSecrets, flagsOf, loadConfig } from '../../src/config.js';
import { startCli } from '../support/cli.js';

const PRIMARY = 'postgres://feed@primary.example/livefeed';

function passwordFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'dbreplica-')), 'pw');
  writeFileSync(file, text);
  return file;
}

/** The ConfigError `load` throws (fails the test when it throws none). */
function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('no ConfigError');
}

describe('--db-replica / LIVEFEED_DB_REPLICA: read replicas of a PostgreSQL --db', () => {
  it('takes the flag repeated (a list) or the variable (URLs separated by spaces); none by default', () => {
    expect(loadConfig({ db: PRIMARY }, {}).dbReplicas).toEqual([]);
    const a = 'postgres://feed@replica-a.example/livefeed';
    const b = 'postgresql://feed@replica-b.example:5433/livefeed?sslmode=require';
    expect(loadConfig({ db: PRIMARY, dbReplica: [a, b] }, {}).dbReplicas).toEqual([a, b]);
    expect(loadConfig({ db: PRIMARY }, { LIVEFEED_DB_REPLICA: ` ${a}\n  ${b} ` }).dbReplicas).toEqual([a, b]);
    // The flag wins over the variable, as for every option.
    expect(loadConfig({ db: PRIMARY, dbReplica: [b] }, { LIVEFEED_DB_REPLICA: a }).dbReplicas).toEqual([b]);
  });

  it('is listed by the serving commands only, as repeatable', () => {
    const serve = flagsOf('serve').find((f) => f.flag === '--db-replica <url>');
    expect(serve).toMatchObject({ repeatable: true });
    expect(serve?.help).toContain('env LIVEFEED_DB_REPLICA');
    expect(flagsOf('start').some((f) => f.flag === '--db-replica <url>')).toBe(true);
    expect(flagsOf('sync').some((f) => f.flag === '--db-replica <url>')).toBe(false);
  });

  it('refuses replicas of a SQLite --db, and a value that is not a postgres:// URL, never showing a password', () => {
    const sqlite = configError(() =>
      loadConfig({ db: 'data/livefeed.db', dbReplica: ['postgres://feed:hunter2@r/livefeed'] }, {}),
    );
    expect(sqlite.message).toMatch(/--db-replica \/ LIVEFEED_DB_REPLICA needs a postgres:\/\/ --db/);
    expect(sqlite.message).toContain('data/livefeed.db');
    const notUrl = configError(() =>
      loadConfig({ db: PRIMARY }, { LIVEFEED_DB_REPLICA: 'postgres://feed:hunter2@r/db replica.db' }),
    );
    expect(notUrl.message).toContain('LIVEFEED_DB_REPLICA=postgres://feed:***@r/db replica.db');
    expect(notUrl.message).toMatch(/replica\.db is not a postgres:\/\/ URL/);
    const unparsable = configError(() =>
      loadConfig({ db: PRIMARY, dbReplica: ['postgres://ok@r/db', 'postgres://feed:hunter2@/db'] }, {}),
    );
    // A value that does not parse is cut to its scheme: nothing of it shows.
    expect(unparsable.message).toContain('--db-replica postgres://ok@r/db postgres://(not a URL): ');
    expect(unparsable.message).toMatch(/not a valid URL/);
    for (const error of [sqlite, notUrl, unparsable]) expect(error.message).not.toContain('hunter2');
  });

  it('puts the password file into every replica URL without one; refuses a replica password given twice', () => {
    const file = passwordFile('from file\n');
    const config = loadConfig(
      { db: PRIMARY, dbReplica: ['postgres://feed@r1/livefeed', 'postgres://reader@r2/livefeed'] },
      { LIVEFEED_DB_PASSWORD_FILE: file },
    );
    const connections = replicaConnections(config.dbReplicas, config.dbPassword);
    expect(connections.map((c) => new URL(c.connectionString).password)).toEqual([
      'from%20file',
      'from%20file',
    ]);
    expect(connections.map((c) => c.display)).toEqual([
      'postgres://feed@r1/livefeed',
      'postgres://reader@r2/livefeed',
    ]);
    const twice = configError(() =>
      loadConfig(
        { db: PRIMARY, dbReplica: ['postgres://feed:hunter2@r1/livefeed'] },
        { LIVEFEED_DB_PASSWORD_FILE: file },
      ),
    );
    expect(twice.message).toContain(
      'postgres://feed:***@r1/livefeed has a password and LIVEFEED_DB_PASSWORD_FILE',
    );
    expect(twice.message).not.toContain('hunter2');
  });

  it('keeps a replica URL password, redacted in its name and listed for scrubbing', () => {
    const replica = 'postgres://reader:s%40cret@r1/livefeed';
    const config = loadConfig({ db: 'postgres://feed:primary-pw@p/livefeed', dbReplica: [replica] }, {});
    const [connection] = replicaConnections(config.dbReplicas, config.dbPassword);
    expect(connection).toEqual({ connectionString: replica, display: 'postgres://reader:***@r1/livefeed' });
    expect(databaseSecrets(config.db, config.dbPassword, config.dbReplicas)).toEqual([
      'primary-pw',
      'primary-pw',
      's@cret',
      's%40cret',
    ]);
  });

  it('the real process refuses --db-replica with a SQLite --db (exit 2) without printing its password', async () => {
    const cli = startCli([
      'serve',
      '--db',
      join(tmpdir(), 'no-such-livefeed.db'),
      '--db-replica',
      'postgres://feed:hunter2@127.0.0.1:1/livefeed',
      '--db-replica',
      'postgres://feed@127.0.0.1:2/livefeed',
    ]);
    const { code } = await cli.exited;
    const stderr = cli.stderr.join('\n');
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/--db-replica \/ LIVEFEED_DB_REPLICA needs a postgres:\/\/ --db/);
    expect(stderr).not.toContain('hunter2');
  }, 30_000);
});
