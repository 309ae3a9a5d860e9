import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { FeedClient } from '../../src/feed/client.js';
import { createApp } from '../../src/http/app.js';
import { createPacketEvents } from '../../src/ops/events.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { fetchedKind, instrumentVerifier } from '../../src/ops/syncMetrics.js';
import { createOps, feedClientHooks, instrumentSync, type Ops } from '../../src/ops/wiring.js';
import { SAMPLE_TOKEN } from '../../src/samplefeed/server.js';
import { SignatureError, type Verifier } from '../../src/sync/verifier.js';
import { gql, testLogger, testService } from '../support/harness.js';
import { listen } from '../support/listen.js';
import { readBundledManifest } from '../support/manifest.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

const manifest = readBundledManifest();

/** Value of one sample line `name{labels} value` in a Prometheus text exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  // As in `start`: the sync and the server share the metrics of a process that serves.
  let ops: Ops;
  let synced: SyncedDatabase;
  const completed: number[] = [];
  beforeAll(async () => {
    ops = await createOps({ version: 'test', deployment: 'production', demo: false }, createPacketEvents());
    synced = await syncedDatabase({
      instrument: (ctx) =>
        instrumentSync(
          {
            ...ctx,
            feed: {
              ...ctx.feed,
              client: new FeedClient({
                feedRoot: ctx.feed.client.feedRoot,
                token: SAMPLE_TOKEN,
                ...feedClientHooks(ops, testLogger()),
              }),
            },
            observe: { ...ctx.observe, onPacketSynced: (p) => completed.push(p) },
          },
          ops,
          testLogger(),
        ),
    });
  });
  afterAll(() => synced.cleanup());

  it('serves the Prometheus text format with every name under livefeed_', async () => {
    const store = openStore(synced.dbPath);
    const app = createApp({
      store,
      service: testService(),
      logger: testLogger(),
      dataDir: synced.dir,
      metrics: ops.metrics,
    });
    await gql(app, '{ latestPacket { number } }');
    await gql(app, '{ nope }');
    const server = await listen(app.handle);
    try {
      const response = await fetch(`${server.origin}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      const names = text
        .split('\n')
        .filter((l) => l.startsWith('# TYPE '))
        .map((l) => l.split(' ')[2]!);
      expect(names.length).toBeGreaterThan(20);
      expect(names.filter((n) => !n.startsWith('livefeed_'))).toEqual([]);

      expect(sample(text, 'livefeed_upstream_latest_packet')).toBe(manifest.lastPacket);
      expect(sample(text, 'livefeed_local_latest_packet')).toBe(manifest.lastPacket);
      expect(sample(text, 'livefeed_lag_packets')).toBe(0);
      expect(sample(text, 'livefeed_lag_seconds')).toBeGreaterThan(0);
      expect(sample(text, 'livefeed_local_packet_age_seconds')).toBeGreaterThan(
        sample(text, 'livefeed_lag_seconds')!,
      );
      expect(sample(text, 'livefeed_unfinished_files{status="failed"}')).toBe(0);
      expect(sample(text, 'livefeed_db_quarantined_lines')).toBe(0);

      const dumps = manifest.packets.flatMap((p) => Object.values(p.jsonDumps));
      expect(sample(text, 'livefeed_files_fetched_total{kind="json-dump"}')).toBe(dumps.length);
      expect(sample(text, 'livefeed_files_fetched_total{kind="signature"}')).toBe(dumps.length);
      expect(sample(text, 'livefeed_fetched_bytes_total{kind="json-dump"}')).toBe(
        dumps.reduce((n, d) => n + d.bytes, 0),
      );
      expect(sample(text, 'livefeed_feed_retries_total')).toBe(0);
      expect(sample(text, 'livefeed_quarantined_lines_total')).toBe(0);
      expect(sample(text, 'livefeed_packets_synced_total')).toBe(manifest.packets.length);
      expect(completed).toHaveLength(manifest.packets.length);
      expect(sample(text, 'livefeed_sync_pass_duration_seconds_count{outcome="ok"}')).toBe(1);

      expect(sample(text, 'livefeed_graphql_requests_total{method="POST",status="200"}')).toBe(2);
      expect(sample(text, 'livefeed_graphql_request_duration_seconds_count{method="POST"}')).toBe(2);
      expect(sample(text, 'livefeed_graphql_operations_total{operation="query",result="ok"}')).toBe(1);
      expect(sample(text, 'livefeed_info{version="test",deployment="production",demo="false"}')).toBe(1);
      expect(text).toMatch(/^livefeed_process_cpu_seconds_total /m);
    } finally {
      await server.close();
      store.close();
    }
  });

  it('reports unknown positions as NaN, not 0, before anything is synced', async () => {
    const text = await createMetrics({ processMetrics: false }).render();
    expect(sample(text, 'livefeed_local_latest_packet')).toBeNaN();
    expect(sample(text, 'livefeed_lag_seconds')).toBeNaN();
    // The exposition format's spelling, not prom-client's `Nan`.
    expect(text).toMatch(/^livefeed_local_latest_packet NaN$/m);
    expect(text).not.toMatch(/ Nan$/m);
  });

  it('counts retries of the feed client', async () => {
    let requests = 0;
    const flaky = createServer((_req, res) => {
      requests++;
      if (requests === 1) res.writeHead(503).end();
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"last_packet": "replication-5.tar.bz2"}');
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const metrics = createMetrics({ processMetrics: false });
    const client = new FeedClient({
      feedRoot: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/api/musicbrainz`,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      ...feedClientHooks({ metrics, events: ops.events }, testLogger()),
    });
    expect(await client.replicationInfo()).toBe(5);
    expect(sample(await metrics.render(), 'livefeed_feed_retries_total')).toBe(1);
    await client.close();
    flaky.close();
  });

  it('counts signature failures whether warned or refused', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const warn: Verifier = {
      mode: 'warn',
      enabled: true,
      check: async () => ({ status: 'INVALID', fingerprint: null, reason: 'bad' }),
    };
    const fail: Verifier = {
      mode: 'fail',
      enabled: true,
      check: async () => {
        throw new SignatureError('signature of x is MISSING');
      },
    };
    await instrumentVerifier(warn, metrics).check('f', 'x', 'sig');
    await expect(instrumentVerifier(fail, metrics).check('f', 'x', null)).rejects.toThrow(SignatureError);
    const text = await metrics.render();
    expect(sample(text, 'livefeed_signature_failures_total{status="INVALID"}')).toBe(1);
    expect(sample(text, 'livefeed_signature_failures_total{status="MISSING"}')).toBe(1);
  });

  it('tells feed files apart by path', () => {
    expect(fetchedKind('json-dumps/json-dump-1/area.tar.xz')).toBe('json-dump');
    expect(fetchedKind('json-dumps/json-dump-1/area.tar.xz.asc')).toBe('signature');
    expect(fetchedKind('replication-7-v2.tar.bz2')).toBe('replication-packet');
    expect(fetchedKind('replication-info')).toBe('other');
  });
});
