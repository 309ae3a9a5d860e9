import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ReadServerState } from '../../src/db/postgres/replicas.js';
import { registerReadServerMetrics } from '../../src/ops/readServerMetrics.js';

const PRIMARY = 'postgres://livefeed:***@db.example:5432/livefeed';
const REPLICA = 'postgres://livefeed:***@replica.example:5432/livefeed';

describe('read server metrics (serve over PostgreSQL with --db-replica)', () => {
  it('shows each server by its redacted URL and role, read again at each scrape', async () => {
    const registry = new Registry();
    let servers: ReadServerState[] = [
      { display: PRIMARY, replica: false, reads: 2, failures: 0, skippedUntil: undefined },
      { display: REPLICA, replica: true, reads: 40, failures: 0, skippedUntil: undefined },
    ];
    registerReadServerMetrics(registry, () => servers);
    const first = await registry.metrics();
    expect(first).toContain(`livefeed_db_server_reads{server="${PRIMARY}",role="primary"} 2`);
    expect(first).toContain(`livefeed_db_server_reads{server="${REPLICA}",role="replica"} 40`);
    expect(first).toContain(`livefeed_db_server_skipped{server="${REPLICA}",role="replica"} 0`);

    // The replica failed twice and is skipped: the next scrape says so, the primary took its reads.
    servers = [
      { display: PRIMARY, replica: false, reads: 9, failures: 0, skippedUntil: undefined },
      { display: REPLICA, replica: true, reads: 40, failures: 2, skippedUntil: Date.now() + 2_000 },
    ];
    const second = await registry.metrics();
    expect(second).toContain(`livefeed_db_server_reads{server="${PRIMARY}",role="primary"} 9`);
    expect(second).toContain(`livefeed_db_server_failures{server="${REPLICA}",role="replica"} 2`);
    expect(second).toContain(`livefeed_db_server_skipped{server="${REPLICA}",role="replica"} 1`);

    // A server no longer listed leaves no stale line behind.
    servers = servers.slice(0, 1);
    expect(await registry.metrics()).not.toContain('replica.example');
  });

  it("shows each replica's replay lag as asked at the scrape, and no line for a replica that cannot say", async () => {
    const registry = new Registry();
    const OTHER = 'postgres://livefeed:***@replica-2.example:5432/livefeed';
    const servers: ReadServerState[] = [
      { display: REPLICA, replica: true, reads: 1, failures: 0, skippedUntil: undefined },
      { display: OTHER, replica: true, reads: 0, failures: 3, skippedUntil: Date.now() + 8_000 },
      { display: PRIMARY, replica: false, reads: 0, failures: 0, skippedUntil: undefined },
    ];
    let lags = [
      { display: REPLICA, seconds: 2.5 },
      { display: OTHER, seconds: null as number | null },
    ];
    let asked = 0;
    registerReadServerMetrics(
      registry,
      () => servers,
      async () => {
        asked++;
        return lags;
      },
    );
    const first = await registry.metrics();
    expect(first).toContain(`livefeed_db_server_replay_lag_seconds{server="${REPLICA}",role="replica"} 2.5`);
    expect(first).not.toMatch(/replay_lag_seconds\{server="[^"]*replica-2/);
    expect(first).not.toMatch(/replay_lag_seconds\{server="[^"]*db\.example/);
    lags = [
      { display: REPLICA, seconds: 0 },
      { display: OTHER, seconds: 4 },
    ];
    const second = await registry.metrics();
    expect(second).toContain(`livefeed_db_server_replay_lag_seconds{server="${REPLICA}",role="replica"} 0`);
    expect(second).toContain(`livefeed_db_server_replay_lag_seconds{server="${OTHER}",role="replica"} 4`);
    expect(asked).toBe(2);
  });
});
