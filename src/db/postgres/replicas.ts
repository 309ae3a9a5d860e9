import pg from 'pg';
import { serverUnavailable } from '../unavailable.js';

/**
 * Routing of reads between a PostgreSQL primary and its streaming replicas (issue 17, step 9). The
 * issue asks for drizzle's read-replica support; livefeed's reads run on `pg` pools directly
 * (named statements, array rows), not through drizzle, so this gives `withReplicas`' semantics
 * over the pools: every read goes to a replica, writes never come here. Where drizzle picks a
 * random replica per query, this picks the least busy one (connections in use plus requests
 * waiting; ties in turn), and skips a replica that fails for a back-off, falling back to the
 * primary when none is left. A read made of several statements runs on ONE connection
 * (`connect()`), so it is answered by one server; {@link ReadRouter.session} keeps every read of a
 * GraphQL request on one server.
 */

/** A server reads can go to: its pool and its name as messages show it (no password). */
export interface ReadServer {
  pool: pg.Pool;
  display: string;
}

/** What {@link ReadRouter.servers} reports of one server (for tests, logs and metrics). */
export interface ReadServerState {
  display: string;
  /** False for the primary. */
  replica: boolean;
  /** Reads answered: statements, and connections handed out for a read made of several. */
  reads: number;
  /** Failures in a row (a success sets it back to 0). */
  failures: number;
  /** Until when (ms since the epoch) reads skip it; undefined when it is not skipped. */
  skippedUntil: number | undefined;
}

/** A replica's replay lag as {@link ReadRouter.replayLags} measured it. */
export interface ReplayLag {
  display: string;
  /**
   * Seconds between now and the commit time of the last transaction the replica has replayed, 0
   * when it has replayed all the WAL it received; null when it could not say (unreachable, skipped,
   * not in recovery, or nothing replayed since it started).
   */
  seconds: number | null;
}

/**
 * A standby's replay lag in seconds (the usual measure: a standby that has replayed all it received
 * is not behind as far as it knows; else the age of the last transaction it replayed). NULL on a
 * server not in recovery, or before it replayed a transaction.
 */
const REPLAY_LAG_SQL = `SELECT (CASE WHEN NOT pg_is_in_recovery() THEN NULL
    WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
    ELSE greatest(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) END)::float8 AS lag`;

/** Longest wait for a replica's replay lag at a scrape (a hung replica must not hold /metrics). */
const REPLAY_LAG_TIMEOUT_MS = 2000;

/** Options of {@link ReadRouter}. */
export interface ReadRouterOptions {
  /** The clock of the back-off, in ms (default Date.now). */
  now?: () => number;
  /** First back-off after a failure, doubled per failure in a row up to `maxBackoffMs`. Default 1,000. */
  backoffMs?: number;
  /** Longest back-off. Default 30,000. */
  maxBackoffMs?: number;
  /** Told when a replica fails and is skipped (to log a warning); the error names no password. */
  onSkip?: (event: { display: string; error: Error; skipMs: number }) => void;
}

interface Server extends ReadServer {
  replica: boolean;
  reads: number;
  failures: number;
  skippedUntil: number;
}

export { serverUnavailable };

/**
 * True for a standby's "canceling statement due to conflict with recovery" (40001; 40P01 for a
 * buffer pin deadlock): the replica is fine, the read may run again elsewhere.
 */
function recoveryConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '40001' || code === '40P01';
}

/** Routes reads over a primary and its replicas; see the module's comment. */
export class ReadRouter {
  readonly #servers: Server[];
  readonly #now: () => number;
  readonly #options: ReadRouterOptions;
  #turn = 0;

  constructor(primary: ReadServer, replicas: readonly ReadServer[], options: ReadRouterOptions = {}) {
    const server = (s: ReadServer, replica: boolean): Server => ({
      ...s,
      replica,
      reads: 0,
      failures: 0,
      skippedUntil: 0,
    });
    this.#servers = [...replicas.map((r) => server(r, true)), server(primary, false)];
    this.#now = options.now ?? Date.now;
    this.#options = options;
  }

  /** Every server, replicas first in the order given, then the primary. */
  servers(): ReadServerState[] {
    const now = this.#now();
    return this.#servers.map(({ display, replica, reads, failures, skippedUntil }) => ({
      display,
      replica,
      reads,
      failures,
      skippedUntil: skippedUntil > now ? skippedUntil : undefined,
    }));
  }

  /**
   * The replay lag of each replica (in the order given), asked of all at once; a replica that is
   * skipped, fails or takes more than `timeoutMs` (default 2,000) is reported with `seconds` null.
   * The lag is the replica's own view (README, Read replicas): a replica cut off from its primary
   * shows 0 once it has replayed what it received. Never throws.
   */
  replayLags(timeoutMs = REPLAY_LAG_TIMEOUT_MS): Promise<ReplayLag[]> {
    const now = this.#now();
    const replicas = this.#servers.filter((s) => s.replica);
    return Promise.all(
      replicas.map(async ({ display, pool, skippedUntil }) => {
        if (skippedUntil > now) return { display, seconds: null };
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), timeoutMs);
        });
        const asked = pool.query<{ lag: number | null }>(REPLAY_LAG_SQL).then(
          ({ rows }) => rows[0]?.lag ?? null,
          () => null,
        );
        try {
          return { display, seconds: await Promise.race([asked, timeout]) };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }

  /**
   * The servers to try, in order: the replicas not skipped, least busy first (ties in turn), then
   * the primary (the primary alone when every replica is skipped, or there are none).
   */
  candidates(): ReadServer[] {
    const now = this.#now();
    const replicas = this.#servers.filter((s) => s.replica && s.skippedUntil <= now);
    const n = replicas.length;
    const turn = n === 0 ? 0 : this.#turn++ % n;
    const busy = (s: Server) => s.pool.totalCount - s.pool.idleCount + s.pool.waitingCount;
    const order = replicas
      .map((s, i) => ({ s, busy: busy(s), rank: (i - turn + n) % n }))
      .sort((a, b) => a.busy - b.busy || a.rank - b.rank)
      .map((c) => c.s);
    return [...order, this.#servers.at(-1)!];
  }

  /**
   * Runs `work` on the first of `candidates` that can answer: a server that is unavailable is
   * skipped for a back-off and the next one tried; a recovery conflict is tried on the next one.
   * @returns what `work` resolves to, and the server that answered
   * @throws the error of the last server tried, or any other error of `work` at once (a bad
   *   statement fails on every server alike)
   */
  async run<T>(
    candidates: readonly ReadServer[],
    work: (server: ReadServer) => Promise<T>,
  ): Promise<{ value: T; server: ReadServer }> {
    for (const [i, candidate] of candidates.entries()) {
      const server = candidate as Server;
      try {
        const value = await work(server);
        server.reads++;
        server.failures = 0;
        return { value, server };
      } catch (error) {
        const last = i === candidates.length - 1;
        if (serverUnavailable(error)) this.#skip(server, error as Error);
        else if (last || !recoveryConflict(error)) throw error;
        if (last) throw error;
      }
    }
    throw new Error('no server to read from');
  }

  /** A replica that failed is skipped for 1, 2, 4 ... s (up to the longest back-off); never the primary. */
  #skip(server: Server, error: Error): void {
    if (!server.replica) return;
    server.failures++;
    const base = this.#options.backoffMs ?? 1000;
    const skipMs = Math.min(base * 2 ** (server.failures - 1), this.#options.maxBackoffMs ?? 30_000);
    server.skippedUntil = this.#now() + skipMs;
    this.#options.onSkip?.({ display: server.display, error, skipMs });
  }

  /** A pool whose every statement and connection goes to the server {@link candidates} puts first. */
  pool(): pg.Pool {
    return routedPool((work) => this.run(this.candidates(), work).then(({ value }) => value));
  }

  /**
   * A pool pinned to one server on its first read (the least busy replica that answers, else the
   * primary), for every read of one GraphQL request: `latestPacket` and the data it covers then come
   * from the same server. When that server fails, or another read finds it unavailable, the session
   * moves on (to the next replica or the primary) and stays there.
   */
  session(): pg.Pool {
    let pinned: ReadServer | undefined;
    return routedPool(async (work) => {
      const candidates = this.candidates();
      // A replica that another read found unavailable meanwhile is left at once (not waited for).
      if (pinned && !candidates.includes(pinned)) pinned = candidates[0]!;
      // Pinned before the first read answers: the request's reads that start meanwhile follow it.
      pinned ??= candidates[0]!;
      const order = [pinned, ...candidates.filter((s) => s !== pinned)];
      const { value, server } = await this.run(order, work);
      pinned = server;
      return value;
    });
  }

  /** Ends the replicas' pools (the primary's belongs to its store). */
  async close(): Promise<void> {
    await Promise.all(this.#servers.filter((s) => s.replica).map((s) => s.pool.end()));
  }
}

type Route = <T>(work: (server: ReadServer) => Promise<T>) => Promise<T>;

/**
 * A `pg.Pool` for the reads (db/postgres/reads.ts takes a store's pool) whose `query` and
 * `connect` go through `route`: a statement runs on the chosen server's pool, a connection (a
 * snapshot's transaction) is one of the chosen server's, released to it as usual. Promise forms
 * only (livefeed's reads use no callbacks); it never opens a connection of its own.
 */
function routedPool(route: Route): pg.Pool {
  const pool = new pg.Pool({ max: 1 });
  pool.query = ((...args: Parameters<pg.Pool['query']>) => {
    if (typeof args.at(-1) === 'function') throw new TypeError('a routed read pool takes no callback');
    return route((server) => (server.pool.query as (...a: typeof args) => Promise<pg.QueryResult>)(...args));
  }) as pg.Pool['query'];
  pool.connect = (() => route((server) => server.pool.connect())) as pg.Pool['connect'];
  return pool;
}
