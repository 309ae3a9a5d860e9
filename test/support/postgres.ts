/**
 * A throw-away PostgreSQL cluster for tests and the benchmark (issue 17): `initdb` in a temporary
 * folder, `postgres` on a free loopback port, password authentication over TCP, one database per
 * {@link PostgresCluster.createDatabase}; {@link PostgresCluster.stop} stops it and deletes the
 * folder. PostgreSQL refuses to run as root, so when the tests run as root the cluster runs as the
 * `postgres` system user (`runuser`), in a folder that user owns. `.ci/run` installs the Debian
 * package where `initdb` is missing (scripts/ci-setup.sh).
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe } from 'vitest';

const exec = promisify(execFile);

/** The superuser of every test cluster and its password (TCP logins need it: scram-sha-256). */
export const POSTGRES_TEST_USER = 'livefeed_test';
export const POSTGRES_TEST_PASSWORD = 'pw-4b1c-not-a-secret';

/** The folder of PostgreSQL's server programs: `initdb` on PATH, else Debian's newest /usr/lib/postgresql/N/bin. */
function findBinDir(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(':')) {
    const initdb = join(folder, 'initdb');
    if (folder && existsSync(initdb)) return join(realpathSync(initdb), '..');
  }
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return undefined;
  const versions = readdirSync(debian)
    .filter((name) => existsSync(join(debian, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(debian, versions[0], 'bin');
}

const BIN_DIR = findBinDir();

/** The user the cluster runs as: the `postgres` system user when we are root, else ourselves (undefined). */
function clusterUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { stdio: 'pipe' }).toString());
    return { name: 'postgres', uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

const RUN_AS = clusterUser();

/**
 * Why the PostgreSQL tests cannot run on this machine, or undefined when they can: no `initdb`
 * (install the `postgresql` package; CI does), or root without a `postgres` system user.
 */
export const POSTGRES_MISSING: string | undefined = (() => {
  if (BIN_DIR === undefined)
    return 'no initdb on PATH or under /usr/lib/postgresql (install the Debian package postgresql)';
  if (process.getuid?.() === 0 && RUN_AS === undefined)
    return 'running as root and there is no postgres system user to run the cluster as';
  return undefined;
})();

/**
 * `describe` for suites that need PostgreSQL: skipped, with the reason in its name, only when
 * {@link POSTGRES_MISSING} says the machine has no PostgreSQL; otherwise a failure to start the
 * cluster fails the suite.
 */
export function describePostgres(name: string, body: () => void): void {
  if (POSTGRES_MISSING) describe.skip(`${name} (skipped: ${POSTGRES_MISSING})`, body);
  else describe(name, body);
}

/** The full path of PostgreSQL program `name` (`initdb`, `pg_ctl`, `psql`). @throws Error when absent. */
export function postgresProgram(name: string): string {
  if (BIN_DIR === undefined) throw new Error(`PostgreSQL is not installed: ${POSTGRES_MISSING}`);
  const path = join(BIN_DIR, name);
  return existsSync(path) ? path : name;
}

/** Runs a PostgreSQL program as the cluster's user; rejects with its stderr. */
export async function runAsCluster(program: string, args: string[]): Promise<string> {
  const [cmd, argv] = RUN_AS
    ? ['runuser', ['-u', RUN_AS.name, '--', postgresProgram(program), ...args]]
    : [postgresProgram(program), args];
  try {
    // Variables of the runner (PGHOST, PGPORT, ...) must not point the programs elsewhere.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PG')));
    return (await exec(cmd, argv, { env, maxBuffer: 16 << 20 })).stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${program} ${args.join(' ')} failed: ${stderr || stdout || (error as Error).message}`);
  }
}

/** A free TCP port on 127.0.0.1 (free now; the caller retries when another process takes it first). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A running throw-away cluster. */
export interface PostgresCluster {
  /** `postgres://user:password@127.0.0.1:port/postgres`. */
  readonly url: string;
  readonly port: number;
  /** The temporary folder (data directory, socket, log). */
  readonly dir: string;
  /**
   * Creates database `name` (a fresh one per suite keeps suites apart) and returns its URL with the
   * password; `withoutPassword` gives it without (for `LIVEFEED_DB_PASSWORD_FILE`).
   */
  /** `options`: what follows `CREATE DATABASE name` (`TEMPLATE template0 LOCALE 'C'`); none by default. */
  createDatabase(name: string, options?: string): Promise<{ url: string; withoutPassword: string }>;
  /** Runs SQL through psql on database `database` and returns its unaligned, tuples-only output. */
  psql(database: string, sql: string): Promise<string>;
  /**
   * Stops the server (fast shutdown: every connection ends), runs `during`, then starts it again on
   * the same port, as an operator's restart with a pause.
   */
  interrupt(during: () => Promise<void>): Promise<void>;
  /** Stops the server (fast shutdown) and deletes the folder. Idempotent. */
  stop(): Promise<void>;
}

/**
 * initdb in a new temporary folder and starts `postgres` on a free port of 127.0.0.1 (its Unix
 * socket in the folder, never the system's), waiting until it accepts connections. For vitest:
 * `beforeAll(async () => { cluster = await startPostgres(); })`, `afterAll(() => cluster?.stop())`.
 * Takes about two seconds. `durable` keeps PostgreSQL's fsync and full page writes (for timings).
 * @throws Error with the program's output when initdb or the server fails (the folder is removed).
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PostgresCluster> {
  if (POSTGRES_MISSING) throw new Error(`PostgreSQL is not installed: ${POSTGRES_MISSING}`);
  const dir = mkdtempSync(join(tmpdir(), 'livefeed-pg-'));
  if (RUN_AS) chownSync(dir, RUN_AS.uid, RUN_AS.gid);
  const data = join(dir, 'data');
  const passwordFile = join(dir, 'password');
  try {
    await writeOwned(passwordFile, POSTGRES_TEST_PASSWORD);
    await runAsCluster('initdb', [
      '-D',
      data,
      '-U',
      POSTGRES_TEST_USER,
      `--pwfile=${passwordFile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
    const port = await startServer(dir, data, !!options.durable);
    return cluster(dir, data, port, !!options.durable);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Gives `path` to the cluster's user (when the tests run as root). */
export function chownToCluster(path: string): void {
  if (RUN_AS) chownSync(path, RUN_AS.uid, RUN_AS.gid);
}

/** Writes `text` to `path`, owned by the cluster's user (initdb reads it as that user). */
async function writeOwned(path: string, text: string): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(path, `${text}\n`, { mode: 0o600 });
  if (RUN_AS) chownSync(path, RUN_AS.uid, RUN_AS.gid);
}

/**
 * Starts the server with `pg_ctl -w`, on a new free port until one is not taken meanwhile. Not
 * `durable`: no fsync (a test cluster needs no crash safety); `durable` (the benchmark): the
 * defaults, as a real server commits.
 */
export async function startServer(dir: string, data: string, durable: boolean): Promise<number> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      await pgCtlStart(dir, data, port, durable);
      return port;
    } catch (error) {
      lastError = error;
      const log = join(dir, 'server.log');
      if (!existsSync(log) || !/could not bind|Address already in use/.test(readFileSync(log, 'utf8')))
        throw new Error(`${(error as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
  }
  throw lastError;
}

/** `pg_ctl start` of the server in `data` on `port`, waiting until it accepts connections. */
async function pgCtlStart(dir: string, data: string, port: number, durable: boolean): Promise<void> {
  const options = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${dir}'`,
    '-c max_connections=50',
    ...(durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ].join(' ');
  await runAsCluster('pg_ctl', [
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-o',
    options,
    '-w',
    '-t',
    '60',
    'start',
  ]);
}

/**
 * The life of the server in `data` (its folder `dir`): stopped at once (`immediate`) when the test
 * process ends without `stop()` (an uncaught error must not leave a server running); `stop()` stops
 * it cleanly (`fast`) and removes `dir`, once.
 */
export function serverLife(dir: string, data: string): { stop(): Promise<void> } {
  let stopped = false;
  const stopAtExit = () => {
    if (stopped) return;
    const args = ['-D', data, '-m', 'immediate', 'stop'];
    const [cmd, argv] = RUN_AS
      ? ['runuser', ['-u', RUN_AS.name, '--', postgresProgram('pg_ctl'), ...args]]
      : [postgresProgram('pg_ctl'), args];
    try {
      execFileSync(cmd, argv, { stdio: 'ignore' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', stopAtExit);
  return {
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

/** `psql -c sql` as the test user on `database` of the server listening in `dir` on `port`; its output. */
export function psqlAt(dir: string, port: number, database: string, sql: string): Promise<string> {
  return runAsCluster('psql', [
    ...['-h', dir, '-p', String(port), '-U', POSTGRES_TEST_USER, '-d', database],
    ...['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
  ]);
}

function cluster(dir: string, data: string, port: number, durable: boolean): PostgresCluster {
  const urlOf = (database: string, password = true) =>
    `postgres://${POSTGRES_TEST_USER}${password ? `:${POSTGRES_TEST_PASSWORD}` : ''}@127.0.0.1:${port}/${database}`;
  const psql = (database: string, sql: string) => psqlAt(dir, port, database, sql);
  return {
    url: urlOf('postgres'),
    port,
    dir,
    psql,
    async createDatabase(name, options = '') {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await psql('postgres', `CREATE DATABASE ${name} ${options}`);
      return { url: urlOf(name), withoutPassword: urlOf(name, false) };
    },
    async interrupt(during) {
      await runAsCluster('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      try {
        await during();
      } finally {
        await pgCtlStart(dir, data, port, durable);
      }
    },
    stop: serverLife(dir, data).stop,
  };
}

/** Who runs the cluster, for messages: the `postgres` system user, or this process's user. */
export const POSTGRES_CLUSTER_OWNER = RUN_AS?.name ?? userInfo().username;
