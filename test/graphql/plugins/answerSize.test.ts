import { join } from 'node:path';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/db/client.js';
import { LINE_COST, operationCost } from '../../../src/graphql/plugins/cost.js';
import { DEFAULT_QUERY_LIMITS } from '../../../src/graphql/plugins/limits.js';
import { schema } from '../../../src/graphql/schema.js';
import { type App, createApp } from '../../../src/http/app.js';
import { tempDir, testLogger, testService } from '../../support/harness.js';
import { mbidOf, recordingLineOf, storeDump } from '../../support/sizedLines.js';

/**
 * Issue 16: the largest answer one request can produce within the limits is at most 10 MB. Stored
 * lines are the large values; the cost limit counts each as LINE_COST + 2 (the line, its node,
 * the list it is in), so at most floor(50,000 / 66) = 757 lines fit: 757 × 12 KiB = 9.3 MB for
 * lines of 12 KiB, the largest line size assumed (real lines are 3–7 KB). The worst queries the
 * limits allow are built and run here, on lines of exactly that size.
 */

const LINE_BYTES = 12 * 1024;
const MAX_ANSWER_BYTES = 10_000_000;
const PACKET = 186_200;
const LINES = 800;
/** The first 20 lines are versions of one MBID: its history's first page is 20 large lines. */
const VERSIONED = mbidOf(0);

let data: Awaited<ReturnType<typeof tempDir>>;
let store: Store;
let app: App;

async function answerBytes(
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ bytes: number; errors: unknown; text: string }> {
  const response = await app.yoga.fetch('http://livefeed.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  return { bytes: Buffer.byteLength(text), errors: (JSON.parse(text) as { errors?: unknown }).errors, text };
}

const cost = (query: string) => operationCost(schema, parse(query));

beforeAll(async () => {
  data = await tempDir('lf-answer-size-');
  store = openStore(join(data.dir, 'livefeed.db'));
  const lines = Array.from({ length: LINES }, (_, i) => recordingLineOf(mbidOf(i < 20 ? 0 : i), LINE_BYTES));
  await storeDump(store, join(data.dir, 'feed'), PACKET, 'recording', lines);
  app = createApp({ store, service: testService(), logger: testLogger(), dataDir: data.dir });
}, 120_000);

afterAll(async () => {
  store.close();
  await data.cleanup();
});

describe('the largest answer within the limits', () => {
  const page = (alias: string, first: number, after = '') =>
    `${alias}: changes(packet: ${PACKET}, entity: RECORDING, first: ${first}${after}) { nodes { data } }`;

  it('the most lines one request can ask for fit in 10 MB, and one line more is refused', async () => {
    const perLine = LINE_COST + 2;
    const most = Math.floor(DEFAULT_QUERY_LIMITS.maxCost / perLine);
    // Two pages (a page holds at most 500): 500 lines, then the rest.
    const worst = `{ ${page('a', 500)} ${page('b', most - 500)} }`;
    expect(cost(worst)).toBe(most * perLine);
    expect(cost(worst)).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
    const answer = await answerBytes(worst);
    expect(answer.errors).toBeUndefined();
    expect(answer.text.split('"annotation"').length - 1).toBe(most);
    expect(answer.bytes).toBeGreaterThan(most * LINE_BYTES);
    expect(answer.bytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const over = await answerBytes(`{ ${page('a', 500)} ${page('b', most - 499)} }`);
    expect((over.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it("the issue's 82 MB query (30 aliases of an entity's history with data) now returns pages: at most 10 MB", async () => {
    const aliases = (first: string) =>
      `{ ${Array.from({ length: 30 }, (_, i) => `e${i}: entity(mbid: "${VERSIONED}") { history${first} { nodes { data } } }`).join(' ')} }`;
    const answer = await answerBytes(aliases(''));
    expect(answer.errors).toBeUndefined();
    expect(answer.text.split('"annotation"').length - 1).toBe(30 * 20);
    expect(answer.bytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    // Larger pages for all 30 are over the limit.
    const larger = await answerBytes(aliases('(first: 30)'));
    expect((larger.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe(
      'QUERY_TOO_COMPLEX',
    );
  });

  it("a variable's default counts as the value the query runs with", async () => {
    const pages = (first: string) =>
      `{ a: changes(packet: ${PACKET}, entity: RECORDING, first: ${first}) { nodes { data } } ` +
      `b: changes(packet: ${PACKET}, entity: RECORDING, first: ${first}, after: "x") { nodes { data } } }`;
    const withDefault = `query Q($n: Int = 500) ${pages('$n')}`;
    expect(cost(withDefault)).toBe(cost(pages('500')));
    // Left out, the variable runs as 500: two pages of 500 lines are refused before they are read.
    const left = await answerBytes(withDefault);
    expect((left.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    // Given, the request's value counts.
    expect(operationCost(schema, parse(withDefault), { n: 5 })).toBe(cost(pages('5')));
    const lists = `query L($m: [ID!]! = ${JSON.stringify(Array.from({ length: 500 }, (_, i) => mbidOf(i + 20)))}) {
      a: entities(mbids: $m) { latest { data } } b: entities(mbids: $m) { latest { data } } }`;
    const refused = await answerBytes(lists);
    expect((refused.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe(
      'QUERY_TOO_COMPLEX',
    );
    const small = await answerBytes(lists, { m: [mbidOf(20)] });
    expect(small.errors).toBeUndefined();
  });

  it('500 MBIDs at once are counted as 500 entities, with their lines', async () => {
    const mbids = JSON.stringify(Array.from({ length: 500 }, (_, i) => mbidOf(i + 20)));
    const one = `{ a: entities(mbids: ${mbids}) { latest { data } } }`;
    expect(cost(one)).toBe(500 * (1 + 1 + LINE_COST));
    const answer = await answerBytes(one);
    expect(answer.errors).toBeUndefined();
    expect(answer.bytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const two = await answerBytes(
      `{ a: entities(mbids: ${mbids}) { latest { data } } b: entities(mbids: ${mbids}) { latest { data } } }`,
    );
    expect((two.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });
});
