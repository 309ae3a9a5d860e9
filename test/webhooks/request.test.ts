import { expect, it } from 'vitest';
import { postBatch } from '../../src/webhooks/request.js';
import { startReceiver, verifySignature } from '../support/webhookReceiver.js';

/** One POST of webhooks/request.ts against a real receiver on port 0, and what its failures say. */

const post = (url: string) =>
  postBatch({
    url,
    secret: 'request-test-secret-0123456789',
    body: '{"edges":[]}',
    delivery: 'd1',
    userAgent: 'livefeed/test',
  });

it('signs the body and answers ok for a 2xx', async () => {
  const receiver = await startReceiver();
  try {
    expect(await post(receiver.url)).toEqual({ ok: true, status: 204 });
    const [got] = receiver.posts;
    expect(
      verifySignature(
        'request-test-secret-0123456789',
        got!.body,
        got!.headers['x-livefeed-signature'] as string,
      ),
    ).toBe(true);
  } finally {
    await receiver.close();
  }
});

it('says why a port of the Fetch standard blocked list can never be reached', async () => {
  const outcome = await post('http://127.0.0.1:4190/hook');
  expect(outcome).toEqual({
    ok: false,
    error: expect.stringMatching(/^bad port: fetch never connects to this port/),
  });
});
