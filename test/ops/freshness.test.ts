import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/client.js';
import { sqliteReads } from '../../src/db/reads.js';
import { packetTime, recordUpstream } from '../../src/db/status.js';
import { freshnessRoute } from '../../src/http/freshnessRoute.js';
import { DEFAULT_FRESHNESS, formatInterval, freshness, SETTLE_DELAY_MS } from '../../src/ops/freshness.js';
import { tempDir } from '../support/harness.js';
import { listen } from '../support/listen.js';
import { readBundledManifest } from '../support/manifest.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

const manifest = readBundledManifest();
const HOUR = 3_600_000;
/** A packet normally completes 90 minutes after its TIMESTAMP; the next one an hour later. */
const DUE = HOUR + SETTLE_DELAY_MS;

describe('freshness in upstream replication-check style', () => {
  let synced: SyncedDatabase;
  let store: Store;
  let newest: Date;
  beforeAll(async () => {
    synced = await syncedDatabase();
    store = openStore(synced.dbPath);
    newest = packetTime(store, manifest.lastPacket)!;
  });
  afterAll(async () => {
    store.close();
    await synced.cleanup();
  });

  it('formats intervals like PostgreSQL', async () => {
    expect(formatInterval(0)).toBe('00:00:00');
    expect(formatInterval(3 * 3600 + 61)).toBe('03:01:01');
    expect(formatInterval(86_400 + 5)).toBe('1 day 00:00:05');
    expect(formatInterval(3 * 86_400)).toBe('3 days 00:00:00');
  });

  it("takes a packet's TIMESTAMP, or estimates it hourly from an earlier one when it has none", async () => {
    const withTime = manifest.packets.find((p) => Object.keys(p.jsonDumps).length > 0)!;
    expect(packetTime(store, withTime.number)).not.toBeNull();
    const without = manifest.packets.find((p, i) => i > 0 && Object.keys(p.jsonDumps).length === 0);
    if (without) {
      const before = packetTime(store, without.number - 1)!;
      expect(packetTime(store, without.number)!.getTime()).toBe(before.getTime() + HOUR);
    }
  });

  it('is OK while the next packet has been due for less than the warning threshold', async () => {
    const f = await freshness(
      sqliteReads(store),
      DEFAULT_FRESHNESS,
      new Date(newest.getTime() + DUE + 30 * 60_000),
    );
    expect(f).toMatchObject({
      level: 'OK',
      localLatest: manifest.lastPacket,
      lagSeconds: 1800,
      ageSeconds: 10_800,
      lagPackets: 0,
    });
    expect(f.message).toBe(
      `OK: newest local packet is ${manifest.lastPacket} of ${newest.toISOString()} (age = 03:00:00, lag = 00:30:00); upstream latest ${manifest.lastPacket}, 0 packets behind`,
    );
  });

  it('is OK through the normal delay: the next packet completes about 90 minutes after its TIMESTAMP', async () => {
    // Just before packet N+1 completes, the newest local packet is N, 2 h 30 min old.
    const f = await freshness(sqliteReads(store), DEFAULT_FRESHNESS, new Date(newest.getTime() + DUE));
    expect(f).toMatchObject({ level: 'OK', lagSeconds: 0, ageSeconds: 9000 });
    // and with the default poll interval (5 min) on top, still no lag worth a warning
    expect(
      (await freshness(sqliteReads(store), DEFAULT_FRESHNESS, new Date(newest.getTime() + DUE + 5 * 60_000)))
        .level,
    ).toBe('OK');
  });

  it('is WARNING from 2 hours of lag and CRITICAL from 6 hours, by default', async () => {
    const at = (lagHours: number) => new Date(newest.getTime() + DUE + lagHours * HOUR);
    expect((await freshness(sqliteReads(store), DEFAULT_FRESHNESS, at(1.99))).level).toBe('OK');
    expect((await freshness(sqliteReads(store), DEFAULT_FRESHNESS, at(2))).level).toBe('WARNING');
    expect((await freshness(sqliteReads(store), DEFAULT_FRESHNESS, at(5.99))).message).toMatch(
      /^WARNING: .*lag = 05:59:24\)/,
    );
    expect((await freshness(sqliteReads(store), DEFAULT_FRESHNESS, at(6))).level).toBe('CRITICAL');
    expect(
      (await freshness(sqliteReads(store), { warningMs: HOUR / 2, criticalMs: HOUR }, at(0.5))).level,
    ).toBe('WARNING');
  });

  it('counts packets behind the upstream position the sync recorded', async () => {
    recordUpstream(store, manifest.lastPacket + 3, new Date().toISOString());
    const f = await freshness(sqliteReads(store), DEFAULT_FRESHNESS, new Date(newest.getTime() + HOUR));
    expect(f.lagPackets).toBe(3);
    expect(f.message).toMatch(/; upstream latest \d+, 3 packets behind$/);
    recordUpstream(store, manifest.lastPacket + 1, new Date().toISOString());
    const one = await freshness(sqliteReads(store), DEFAULT_FRESHNESS, new Date(newest.getTime() + HOUR));
    expect(one.message).toMatch(/; upstream latest \d+, 1 packet behind$/);
    recordUpstream(store, manifest.lastPacket, new Date().toISOString());
  });

  it('is CRITICAL with no packet synced', async () => {
    const data = await tempDir();
    const empty = openStore(`${data.dir}/livefeed.db`);
    expect(await freshness(sqliteReads(empty), DEFAULT_FRESHNESS)).toMatchObject({
      level: 'CRITICAL',
      message: 'CRITICAL: no packet synced yet',
    });
    empty.close();
    await data.cleanup();
  });

  it('GET /freshness: CRITICAL (503) when the database does not answer; any other error is thrown (a 500)', async () => {
    const failing = (error: Error) =>
      ({ ...sqliteReads(store), upstream: () => Promise.reject(error) }) as ReturnType<typeof sqliteReads>;
    const told: unknown[] = [];
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' });
    const down = freshnessRoute(failing(refused), DEFAULT_FRESHNESS, undefined, (e) => told.push(e));
    const bug = freshnessRoute(failing(new TypeError('x is not a function')), DEFAULT_FRESHNESS);
    const server = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const route = url.searchParams.has('bug') ? bug : down;
      Promise.resolve(route.handle(req, res, url)).catch(() => {
        res.writeHead(500);
        res.end('500\n');
      });
    });
    try {
      const response = await fetch(`${server.origin}/freshness`);
      expect(response.status).toBe(503);
      const text = await response.text();
      expect(text).toBe('CRITICAL: cannot read the database: it does not answer (see the log)\n');
      expect(text).not.toContain('10.0.0.5');
      expect(told).toEqual([refused]);
      expect((await fetch(`${server.origin}/freshness?bug`)).status).toBe(500);
    } finally {
      await server.close();
    }
  });

  it('GET /freshness: the line with 200 for OK and WARNING, 503 for CRITICAL; JSON on request', async () => {
    let now = new Date(newest.getTime() + DUE);
    const route = freshnessRoute(sqliteReads(store), DEFAULT_FRESHNESS, () => now);
    const server = await listen((req, res) => {
      void route.handle(req, res, new URL(req.url ?? '/', 'http://localhost'));
    });
    try {
      let response = await fetch(`${server.origin}/freshness`);
      expect(response.status).toBe(200);
      expect(await response.text()).toMatch(/^OK: newest local packet is \d+ .*\n$/);
      now = new Date(newest.getTime() + DUE + 3 * HOUR);
      response = await fetch(`${server.origin}/freshness`);
      expect([response.status, (await response.text()).slice(0, 8)]).toEqual([200, 'WARNING:']);
      now = new Date(newest.getTime() + DUE + 7 * HOUR);
      response = await fetch(`${server.origin}/freshness?format=json`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({
        level: 'CRITICAL',
        localLatest: manifest.lastPacket,
        lagSeconds: 7 * 3600,
        lagPackets: 0,
        upstreamLatest: manifest.lastPacket,
        warningSeconds: 7200,
        criticalSeconds: 21_600,
      });
    } finally {
      await server.close();
    }
  });

  it('takes its thresholds from flags or env, in hours', async () => {
    const config = loadConfig({}, { LIVEFEED_FRESHNESS_WARNING: '1', LIVEFEED_FRESHNESS_CRITICAL: '3' });
    expect([config.freshnessWarningMs, config.freshnessCriticalMs]).toEqual([HOUR, 3 * HOUR]);
    expect(loadConfig({ freshnessWarning: '0.5' }, {}).freshnessWarningMs).toBe(HOUR / 2);
    expect(loadConfig({}, {}).freshnessCriticalMs).toBe(6 * HOUR);
    expect(() => loadConfig({}, { LIVEFEED_FRESHNESS_WARNING: '8' })).toThrow(
      /warning \(8 h\) is above critical \(6 h\)/,
    );
    expect(() => loadConfig({}, { LIVEFEED_FRESHNESS_CRITICAL: 'soon' })).toThrow(
      /LIVEFEED_FRESHNESS_CRITICAL/,
    );
  });
});
