import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { currentOfMbid, currentOfMbids } from '../../src/db/currentQueries.js';
import { openForServing } from '../../src/db/readOnly.js';
import { removalFilter } from '../../src/db/removalFilter.js';
import { readSnapshot } from '../../src/db/snapshot.js';
import { currentStateArchives, storeStep } from '../support/currentStateFeed.js';
import { tempDir } from '../support/harness.js';

const everyMbid = (store: Store) =>
  store.sqlite
    .prepare('SELECT mbid FROM changes UNION SELECT mbid FROM removals ORDER BY mbid')
    .pluck()
    .all() as string[];

describe('the removal filter of a serving connection (db/removalFilter.ts)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let writer: Store;
  let reader: Store;

  beforeAll(async () => {
    dir = await tempDir('lf-removal-filter-');
    const path = join(dir.dir, 'livefeed.db');
    writer = openStore(path);
    reader = openForServing(path);
  });
  afterAll(async () => {
    reader?.close();
    writer?.close();
    await dir?.cleanup();
  });

  it('never hides a removal from a reader that cached its filter before the removal was stored', async () => {
    const steps = await currentStateArchives(dir.dir);
    const versions: string[] = [];
    for (const step of steps) {
      await storeStep(writer, step);
      versions.push(
        writer.sqlite
          .prepare("SELECT value FROM meta WHERE key = 'removals_version'")
          .pluck()
          .get() as string,
      );
      // The same reader connection throughout: its filter is cached from the step before. The
      // single-MBID statement reads `removals` for every MBID, without the filter.
      const mbids = everyMbid(writer);
      const listed = currentOfMbids(reader, mbids, { data: false });
      const single = mbids.map((mbid) => currentOfMbid(reader, mbid));
      expect(listed.map((row) => [row?.status, row?.packet, row?.mergedInto])).toEqual(
        single.map((row) => [row?.status, row?.packet, row?.mergedInto]),
      );
    }
    // Each stored packet with removals changed the counter; a JSON dump did not.
    const kinds = steps.map((step) => step.kind);
    for (let i = 1; i < steps.length; i++) {
      if (kinds[i] === 'packet') expect(versions[i]).not.toBe(versions[i - 1]);
      else expect(versions[i]).toBe(versions[i - 1]);
    }
    expect(
      currentOfMbids(reader, everyMbid(writer)).filter((row) => row?.status === 'DELETED').length,
    ).toBeGreaterThan(0);
  });

  it('a packet stored again (its removals deleted and written again) changes the counter', async () => {
    const before = writer.sqlite
      .prepare("SELECT value FROM meta WHERE key = 'removals_version'")
      .pluck()
      .get();
    const packet = (await currentStateArchives(join(dir.dir, 'again'))).find(
      (step) => step.kind === 'packet',
    )!;
    await storeStep(writer, packet);
    const after = writer.sqlite
      .prepare("SELECT value FROM meta WHERE key = 'removals_version'")
      .pluck()
      .get();
    expect(Number(after)).toBeGreaterThan(Number(before));
  });

  it('answers "may have" for every removed MBID and rules out most others', () => {
    const removed = Array.from({ length: 3000 }, () => randomUUID());
    const insert = writer.sqlite.prepare(
      "INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES (?, 'artist', 99, 'DELETED', NULL)",
    );
    writer.sqlite.transaction(() => {
      for (const mbid of removed) insert.run(mbid);
    })();
    readSnapshot(reader, () => {
      const filter = removalFilter(reader);
      expect(removed.every((mbid) => filter.mayHave(mbid))).toBe(true);
      const others = Array.from({ length: 10_000 }, () => randomUUID());
      const falsePositives = others.filter((mbid) => filter.mayHave(mbid)).length;
      // 16 bits per removed MBID: about 1 in 16 at most.
      expect(falsePositives).toBeLessThan(others.length / 10);
    });
  });
});
