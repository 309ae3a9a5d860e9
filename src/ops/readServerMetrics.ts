import { Gauge, type Registry } from 'prom-client';
import type { ReadServerState, ReplayLag } from '../db/postgres/replicas.js';

type Labels = 'server' | 'role';

/**
 * Registers the metrics of the servers a PostgreSQL `serve` reads from (the primary and each
 * `--db-replica`, README "Read replicas"), read from `servers` at each scrape and labelled by the
 * server's URL without its password and `role` (`primary` or `replica`):
 * - `livefeed_db_server_reads`: reads the server answered since the process started (a counter's
 *   value, exposed as a gauge as it is read from the router, not counted here);
 * - `livefeed_db_server_failures`: failures in a row (0 after a success);
 * - `livefeed_db_server_skipped`: 1 while reads skip the replica after failures, else 0;
 * - `livefeed_db_server_replay_lag_seconds` (replicas, when `replayLags` is given): how far the
 *   replica's replay is behind, asked of it at each scrape; no line for a replica that cannot say
 *   (skipped, unreachable, slow to answer).
 */
export function registerReadServerMetrics(
  registry: Registry,
  servers: () => readonly ReadServerState[],
  replayLags?: () => Promise<readonly ReplayLag[]>,
): void {
  const gauge = (name: string, help: string, value: (s: ReadServerState) => number) =>
    new Gauge<Labels>({
      name,
      help,
      labelNames: ['server', 'role'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of servers())
          this.set({ server: s.display, role: s.replica ? 'replica' : 'primary' }, value(s));
      },
    });
  gauge('livefeed_db_server_reads', 'Reads a database server answered since start', (s) => s.reads);
  gauge('livefeed_db_server_failures', 'Failed reads of a database server in a row', (s) => s.failures);
  gauge('livefeed_db_server_skipped', '1 while reads skip a replica after failures', (s) =>
    s.skippedUntil === undefined ? 0 : 1,
  );
  if (!replayLags) return;
  new Gauge<Labels>({
    name: 'livefeed_db_server_replay_lag_seconds',
    help: "Seconds a replica's replay is behind its primary (0: it has replayed all it received)",
    labelNames: ['server', 'role'],
    registers: [registry],
    async collect() {
      const lags = await replayLags();
      this.reset();
      for (const { display, seconds } of lags)
        if (seconds !== null) this.set({ server: display, role: 'replica' }, seconds);
    },
  });
}
