import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { positionOfEvent } from '../../src/db/changeFeedQueries.js';
import { feedPositionText } from '../../src/db/feedPosition.js';
import { registerWebhookMetrics } from '../../src/ops/webhookMetrics.js';
import { webhookLines } from '../../src/ops/webhookStatus.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { startSync } from '../support/cli.js';
import { tempDir } from '../support/harness.js';
import { POSTGRES_TEST_PASSWORD } from '../support/postgres.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { type Receiver, startReceiver, verifySignature } from '../support/webhookReceiver.js';

/**
 * `livefeed sync --webhooks-file` as a real process on both stores (issue 17, step 7): a receiver on
 * port 0 down during one run gets every event once, in order, on the next; the delivery order and
 * the `webhooks` row are the same on PostgreSQL as on SQLite (the SQLite run goes first).
 */

const SECRET = 'cli-stores-webhook-secret-0123456789';

/** What each store's run delivered and recorded, to compare the second store's with the first's. */
const runs = new Map<string, { received: string[]; row: Record<string, unknown> }>();

/** The `webhooks` row without what differs between two equally good runs (times, the URL's port). */
const ROW_SQL = `SELECT name, CAST(entities AS TEXT) AS entities, CAST(mbids AS TEXT) AS mbids, cursor,
  delivered_packet, attempts, last_error, delivered_events, deliveries, failed_deliveries,
  next_retry_at IS NULL AS no_retry, retired_at IS NULL AS active FROM webhooks`;

describeStores('webhooks through a real sync process', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  let db: TestDatabase;
  let hooksFile: string;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir('lf-hooks-cli-');
    db = await stores.create(data.dir);
    receiver = await startReceiver('/in');
    hooksFile = join(data.dir, 'hooks.yaml');
    writeFileSync(
      hooksFile,
      `- name: receiver\n  url: ${receiver.url}?key=not-shown\n  secret: ${SECRET}\n  batchSize: 4\n`,
    );
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await db?.close();
    await feed?.close();
    await data?.cleanup();
  });

  const sync = async (to: number) => {
    const run = startSync(feed.feedRoot, data.dir, [
      '--db',
      db.db,
      '--once',
      '--to',
      String(to),
      '--webhooks-file',
      hooksFile,
    ]);
    const { code } = await run.exited;
    return { code, output: run.stderr.join('\n') + run.stdout.join('\n') };
  };

  it('a receiver down during one run gets every event once, in order, on the next run', async () => {
    await receiver.down();
    const down = await sync(186105);
    expect(down.code, down.output).toBe(0);
    expect(down.output).toContain(
      'livefeed: webhook receiver: not delivered: connection refused (ECONNREFUSED); its events wait for the next run',
    );
    expect(await db.webhooks.states()).toMatchObject([
      {
        name: 'receiver',
        url: receiver.url,
        attempts: 3,
        lastError: 'connection refused (ECONNREFUSED)',
        deliveredEvents: 0,
        failedDeliveries: 3,
        cursor: null,
      },
    ]);

    await receiver.reopen();
    const up = await sync(186110);
    expect(up.code, up.output).toBe(0);
    expect(up.output).not.toContain('not delivered');
    const page = await db.webhooks.readFeedEvents({ first: 100_000 });
    const expected = page.events.map((e) => feedPositionText(positionOfEvent(e)));
    expect(expected.length).toBeGreaterThan(8);
    const received = receiver.accepted().flatMap((b) => b.edges.map((e) => e.id));
    expect(received).toEqual(expected);
    expect(receiver.accepted().every((b) => b.edges.length <= 4)).toBe(true);
    expect(
      receiver.posts.every((p) =>
        verifySignature(SECRET, p.body, p.headers['x-livefeed-signature'] as string),
      ),
    ).toBe(true);
    const [row] = await db.rows(ROW_SQL);
    expect(row).toMatchObject({ attempts: 0, delivered_events: expected.length, no_retry: 1, active: 1 });
    for (const output of [down.output, up.output]) {
      expect(output).not.toContain(SECRET);
      expect(output).not.toContain('not-shown');
      expect(output).not.toContain(POSTGRES_TEST_PASSWORD);
    }

    // `/metrics` and `status` over this store's reads (ops/webhookMetrics.ts, ops/webhookStatus.ts).
    const registry = new Registry();
    registerWebhookMetrics(registry, () => db.reads.webhookStates());
    const metrics = await registry.metrics();
    const labels = `webhook="receiver",url="${receiver.url}"`;
    expect(metrics).toContain(`livefeed_webhook_failed_attempts{${labels}} 0`);
    expect(metrics).toContain(`livefeed_webhook_delivered_events_total{${labels}} ${expected.length}`);
    expect(metrics).toContain(`livefeed_webhook_deliveries_total{${labels},result="failed"} 3`);
    expect(metrics).not.toContain(SECRET);
    expect(webhookLines(await db.webhooks.states(), 200).join('\n')).toMatch(
      new RegExp(`receiver {2}http://127\\.0\\.0\\.1:\\d+/in\\n {6}ok: ${expected.length} events delivered`),
    );

    runs.set(stores.kind, { received, row: row! });
    const first = runs.get('sqlite');
    if (stores.kind === 'postgres' && first) {
      // The same events, in the same batches' order, and the same delivery record as on SQLite.
      expect(received).toEqual(first.received);
      expect(row).toEqual(first.row);
    }
  }, 180_000);
});
