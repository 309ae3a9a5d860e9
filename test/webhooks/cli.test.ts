import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { positionOfEvent, readFeedEvents } from '../../src/db/changeFeedQueries.js';
import { openStore } from '../../src/db/client.js';
import { feedPositionText } from '../../src/db/feedPosition.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { startCli, startSync } from '../support/cli.js';
import { gql, tempDir, testApp } from '../support/harness.js';
import { type Receiver, startReceiver, verifySignature } from '../support/webhookReceiver.js';

const SECRET = 'cli-webhook-secret-0123456789abcdef';

async function finished(cli: ReturnType<typeof startCli>) {
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout.join('\n'), stderr: cli.stderr.join('\n') };
}

describe('webhooks through the real CLI (sync --once twice, status, metrics, GraphQL)', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  let hooksFile: string;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    receiver = await startReceiver('/in');
    hooksFile = join(data.dir, 'hooks.yaml');
    writeFileSync(
      hooksFile,
      `# the receiver of the test\n- name: receiver\n  url: ${receiver.url}?key=not-shown\n  secret: ${SECRET}\n  batchSize: 4\n`,
    );
  });
  afterAll(async () => {
    await receiver.close();
    await feed.close();
    await data.cleanup();
  });

  it('a receiver down during one run gets every event once, in order, on the next run; status, metrics and webhooks show the attempts', {
    timeout: 180_000,
  }, async () => {
    await receiver.down();
    const down = await finished(
      startSync(feed.feedRoot, data.dir, ['--once', '--to', '186105', '--webhooks-file', hooksFile]),
    );
    expect(down.code).toBe(0);
    expect(down.stderr).toContain(
      'livefeed: webhook receiver: not delivered: connection refused (ECONNREFUSED); its events wait for the next run',
    );

    const status = await finished(startCli(['status', '--offline', '--data-dir', data.dir]));
    expect(status.stdout).toMatch(/webhooks {3}1 configured, 1 failing/);
    expect(status.stdout).toMatch(
      /receiver {2}http:\/\/127\.0\.0\.1:\d+\/in\n {6}FAILING: attempts 3, next retry \S+Z\n {6}0 events delivered \(nothing yet\)\n {6}last error at \S+Z: connection refused \(ECONNREFUSED\)/,
    );

    const app = testApp(join(data.dir, 'livefeed.db'), data.dir);
    try {
      const answer = await gql(
        app,
        '{ webhooks { name url attempts lastError nextRetryAt lastSuccessAt deliveredEvents failedDeliveries position } }',
      );
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.webhooks).toEqual([
        {
          name: 'receiver',
          url: receiver.url,
          attempts: 3,
          lastError: 'connection refused (ECONNREFUSED)',
          nextRetryAt: expect.stringMatching(/Z$/),
          lastSuccessAt: null,
          deliveredEvents: 0,
          failedDeliveries: 3,
          position: null,
        },
      ]);
      const metrics = await app.metrics.render();
      const labels = `{webhook="receiver",url="${receiver.url}"}`;
      expect(metrics).toContain(`livefeed_webhook_failed_attempts${labels} 3`);
      expect(metrics).toMatch(
        new RegExp(`livefeed_webhook_next_retry_timestamp_seconds${labels.replace(/[{}.?]/g, '\\$&')} \\d+`),
      );
      expect(metrics).toContain(
        `livefeed_webhook_deliveries_total{webhook="receiver",url="${receiver.url}",result="failed"} 3`,
      );
      expect(metrics).not.toContain(SECRET);
      expect(metrics).not.toContain('not-shown');
    } finally {
      app.store.close();
    }

    await receiver.reopen();
    const up = await finished(
      startSync(feed.feedRoot, data.dir, ['--once', '--to', '186110', '--webhooks-file', hooksFile]),
    );
    expect(up.code).toBe(0);
    expect(up.stderr).not.toContain('not delivered');

    const store = openStore(join(data.dir, 'livefeed.db'), { readonly: true });
    const expected = readFeedEvents(store, { first: 100_000 }).events.map((e) =>
      feedPositionText(positionOfEvent(e)),
    );
    store.close();
    expect(expected.length).toBeGreaterThan(8);
    const received = receiver.accepted().flatMap((b) => b.edges.map((e) => e.id));
    expect(received).toEqual(expected);
    expect(
      receiver.posts.every((p) =>
        verifySignature(SECRET, p.body, p.headers['x-livefeed-signature'] as string),
      ),
    ).toBe(true);
    // The key of the URL's query travels to the receiver only.
    expect(receiver.posts.every((p) => p.headers['user-agent']?.startsWith('livefeed/'))).toBe(true);

    const after = await finished(startCli(['status', '--offline', '--data-dir', data.dir]));
    expect(after.stdout).toMatch(
      new RegExp(
        `receiver {2}http://127\\.0\\.0\\.1:\\d+/in\\n {6}ok: ${expected.length} events delivered \\(through packet 1861\\d\\d\\); last success \\S+Z`,
      ),
    );
    for (const output of [down, status, up, after]) {
      expect(output.stderr + output.stdout).not.toContain(SECRET);
      expect(output.stderr + output.stdout).not.toContain('not-shown');
    }
  });

  it('a bad webhooks file is exit 2, naming the file, the entry and the field', {
    timeout: 60_000,
  }, async () => {
    const bad = join(data.dir, 'bad.yaml');
    writeFileSync(bad, `- url: ${receiver.url}\n  secret: ${SECRET}\n  entities: [ARTIST, SONG]\n`);
    const run = await finished(startSync(feed.feedRoot, data.dir, ['--once', '--webhooks-file', bad]));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `--webhooks-file ${bad}: [0].entities[1] (line 3): unknown entity type "SONG"`,
    );
    expect(run.stderr).not.toContain(SECRET);
  });
});
