import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  databaseSecrets,
  isPostgresUrl,
  postgresConnectionString,
  readDatabasePassword,
  redactDatabaseUrl,
} from '../../src/config/databaseUrl.js';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('--db: a SQLite file or a PostgreSQL URL', () => {
  it('tells a PostgreSQL URL (postgres:// or postgresql://) from a SQLite path', () => {
    expect(isPostgresUrl('postgres://h/db')).toBe(true);
    expect(isPostgresUrl('POSTGRESQL://h/db')).toBe(true);
    expect(isPostgresUrl('./data/postgres://x.db')).toBe(false);
    expect(isPostgresUrl('/var/lib/livefeed.db')).toBe(false);
  });

  it('redacts the password of the URL and of a password= parameter, keeping the rest', () => {
    expect(redactDatabaseUrl('postgres://feed:s%40cret@db.example:5433/livefeed?sslmode=verify-full')).toBe(
      'postgres://feed:***@db.example:5433/livefeed?sslmode=verify-full',
    );
    expect(redactDatabaseUrl('postgresql://feed@db/livefeed?password=hunter2')).toBe(
      'postgresql://feed@db/livefeed?password=***',
    );
    expect(redactDatabaseUrl('data/livefeed.db')).toBe('data/livefeed.db');
  });

  it('lists the password as written and decoded for scrubbing; puts a file password into the URL', () => {
    expect(databaseSecrets('postgres://feed:s%40cret@db/livefeed', undefined)).toEqual([
      's@cret',
      's%40cret',
    ]);
    expect(databaseSecrets('postgres://feed@db/livefeed', 'from-file')).toEqual(['from-file']);
    expect(databaseSecrets('data/livefeed.db', undefined)).toEqual([]);
    expect(new URL(postgresConnectionString('postgres://feed@db/livefeed', 'p@ss word')).password).toBe(
      'p%40ss%20word',
    );
  });

  it('reads LIVEFEED_DB_PASSWORD_FILE trimming only the trailing newline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dbpw-'));
    const file = join(dir, 'pw');
    writeFileSync(file, ' spaced pass \r\n');
    expect(readDatabasePassword({ LIVEFEED_DB_PASSWORD_FILE: file })).toBe(' spaced pass ');
    expect(readDatabasePassword({})).toBeUndefined();
    expect(() => readDatabasePassword({ LIVEFEED_DB_PASSWORD_FILE: join(dir, 'missing') })).toThrow(
      /LIVEFEED_DB_PASSWORD_FILE: cannot read .*missing: ENOENT/,
    );
    writeFileSync(file, '\n');
    expect(() => readDatabasePassword({ LIVEFEED_DB_PASSWORD_FILE: file })).toThrow(ConfigError);
  });

  it('loads a PostgreSQL --db with its password file; SQLite stays the default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dbpw-'));
    const file = join(dir, 'pw');
    writeFileSync(file, 'secret\n');
    const config = loadConfig(
      {},
      { LIVEFEED_DB: 'postgres://feed@db/livefeed', LIVEFEED_DB_PASSWORD_FILE: file },
    );
    expect(config).toMatchObject({ db: 'postgres://feed@db/livefeed', dbPassword: 'secret' });
    expect(loadConfig({}, {}).db).toBe(join('data', 'livefeed.db'));
  });
});
