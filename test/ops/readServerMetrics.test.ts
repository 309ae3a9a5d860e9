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
});
