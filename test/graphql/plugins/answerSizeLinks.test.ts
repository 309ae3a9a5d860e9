import { join } from 'node:path';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/db/client.js';
import { LINE_COST, LINKED_LIST_SIZE, operationCost } from '../../../src/graphql/plugins/cost.js';
import { DEFAULT_QUERY_LIMITS } from '../../../src/graphql/plugins/limits.js';
import { schema } from '../../../src/graphql/schema.js';
import { type App, createApp } from '../../../src/http/app.js';
import { tempDir, testLogger, testService } from '../../support/harness.js';
import { mbidOf, recordingLineOf, storeDump } from '../../support/sizedLines.js';

/**
 * Issue 16, the largest answer within the limits, through links: an artist credit's `artist` reads
 * another stored line, so the credits of one line are not bounded by that line's bytes. A release
 * line of 12 KiB (the largest size the cost assumes) filled with the shortest credits a line can
 * hold, each linking to an artist line of 12 KiB: the most such requests the limit lets through
 * stay within 10 MB, and the review's query (30 aliases of a release's credited artists' lines,
 * 14.8 MB before) is refused.
 */

const LINE_BYTES = 12 * 1024;
const MAX_ANSWER_BYTES = 10_000_000;
const RELEASE = mbidOf(999_999);

/**
 * Credits of the shortest shape a real line has, filling `bytes`: every credit of the sample lines
 * (fixtures/samples) holds the artist's MBID, name, sort name, disambiguation, type and aliases.
 */
function releaseLineOf(bytes: number): { line: string; credits: number } {
  const credits: object[] = [];
  const lineOf = () => JSON.stringify({ id: RELEASE, title: 'Compilation', 'artist-credit': credits });
  for (let i = 1; ; i++) {
    const artist = {
      id: mbidOf(i),
      name: 'A',
      'sort-name': 'A',
      disambiguation: '',
      type: null,
      aliases: [],
    };
    credits.push({ name: 'A', joinphrase: '', artist: { ...artist, 'type-id': null } });
    if (Buffer.byteLength(lineOf()) > bytes) {
      credits.pop();
      return { line: lineOf(), credits: credits.length };
    }
  }
}

let data: Awaited<ReturnType<typeof tempDir>>;
let store: Store;
let app: App;
let credits: number;

async function answer(
  query: string,
): Promise<{ bytes: number; errors?: { extensions: { code: string } }[] }> {
  const response = await app.yoga.fetch('http://livefeed.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  const text = await response.text();
  return { bytes: Buffer.byteLength(text), errors: (JSON.parse(text) as { errors?: never }).errors };
}

const aliases = (count: number) =>
  `{ ${Array.from(
    { length: count },
    (_, i) =>
      `r${i}: entity(mbid: "${RELEASE}") { current { ... on Release { artistCredit { artist { latest { data } } } } } }`,
  ).join(' ')} }`;

beforeAll(async () => {
  data = await tempDir('lf-answer-links-');
  store = openStore(join(data.dir, 'livefeed.db'));
  const release = releaseLineOf(LINE_BYTES);
  credits = release.credits;
  const artists = Array.from({ length: credits }, (_, i) => recordingLineOf(mbidOf(i + 1), LINE_BYTES));
  await storeDump(store, join(data.dir, 'feed'), 186_200, 'artist', artists);
  await storeDump(store, join(data.dir, 'feed'), 186_201, 'release', [release.line]);
  app = createApp({ store, service: testService(), logger: testLogger(), dataDir: data.dir });
}, 120_000);

afterAll(async () => {
  store.close();
  await data.cleanup();
});

describe('the largest answer within the limits, through links', () => {
  it('a line of 12 KiB holds no more references than a list of links is counted for', () => {
    expect(credits).toBeGreaterThan(20);
    expect(credits).toBeLessThanOrEqual(LINKED_LIST_SIZE);
  });

  it('counts a list of links by the references a line holds, and a list without links as before', () => {
    const linked = operationCost(schema, parse(aliases(1)));
    expect(linked).toBeGreaterThanOrEqual(LINKED_LIST_SIZE * LINE_COST);
    const names = operationCost(
      schema,
      parse(`{ entity(mbid: "${RELEASE}") { current { ... on Release { artistCredit { artistName } } } } }`),
    );
    expect(names).toBeLessThan(100);
  });

  it('the most requests of linked lines the limit allows fit in 10 MB; the review query is refused', async () => {
    const perAlias = operationCost(schema, parse(aliases(1)));
    const most = Math.floor(DEFAULT_QUERY_LIMITS.maxCost / perAlias);
    expect(most).toBeGreaterThan(0);
    const worst = await answer(aliases(most));
    expect(worst.errors).toBeUndefined();
    expect(worst.bytes).toBeGreaterThan(most * credits * LINE_BYTES);
    expect(worst.bytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const over = await answer(aliases(most + 1));
    expect(over.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COMPLEX');
    const review = await answer(aliases(30));
    expect(review.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });
});
