import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/db/client.js';
import { changeId } from '../src/db/keys.js';
import { changesPage } from '../src/db/queries.js';
import { ArchiveError } from '../src/feed/errors.js';
import { hasXzProgram } from '../src/feed/xz.js';
import { dumpEntityOf, importJsonDump } from '../src/sync/import.js';
import { writeJsonDump, writeTarArchive } from './support/archives.js';
import { tempDir } from './support/harness.js';
import { SEARCH_SEGMENTS_SQL } from './support/searchFeed.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

// A full JSON dump has the same line format as an hourly one (FEED.md): many lines, among them a
// multi-megabyte one (spanning many decompressed chunks), raw U+2028/U+2029/U+0085 and `\r`, keys
// in any order, and malformed lines.
const tricky = 'Line\u2028sep \u2029para \u0085nel';
const long = JSON.stringify({ name: 'Long', id: id(2), media: [{ tracks: 'x'.repeat(3 * 1024 * 1024) }] });
const lines = [
  JSON.stringify({ id: id(1), name: tricky }),
  long,
  `{"name": "Carriage\rReturn",   "id":"${id(3)}"}`,
  'not json at all',
  JSON.stringify({ id: 'not-an-mbid' }),
  '',
  ...Array.from({ length: 5000 }, (_, i) =>
    JSON.stringify({ 'sort-name': `Artist ${i}`, id: id(100 + i), n: i }),
  ),
  `{"id": "${id(9)}", "nested": {"id": "x"}, "list": [1, -2.5e3, true, false, null, "\\u00e9\\n"]}`,
];

describe('livefeed import: a local JSON dump through the sync pipeline', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let archive: string;
  let store: Store;

  beforeAll(async () => {
    dir = await tempDir('import-');
    archive = (await writeJsonDump(dir.dir, { packet: 777, entity: 'artist', lines })).path;
    store = openStore(join(dir.dir, 'db.sqlite'));
  });
  afterAll(async () => {
    store.close();
    await dir.cleanup();
  });

  it('takes the entity type from the member mbdump/<entity>', async () => {
    expect(await dumpEntityOf(archive)).toBe('artist');
  });

  it('stores every line in file order, byte for byte, and quarantines the malformed ones', async () => {
    const seen: number[] = [];
    const result = await importJsonDump(store, {
      path: archive,
      packet: 777,
      onProgress: (read) => seen.push(read),
    });
    expect(result).toMatchObject({
      entity: 'artist',
      lineCount: lines.length,
      changeCount: lines.length - 3,
      quarantineCount: 3,
    });
    expect(result.metadata.replicationSequence).toBe(777);
    expect(seen.at(-1)).toBe(result.fileBytes);
    const rows = store.sqlite
      .prepare('SELECT id, position, mbid, data FROM changes WHERE packet = 777 ORDER BY id')
      .all() as { id: number; position: number; mbid: string; data: string }[];
    expect(rows).toHaveLength(lines.length - 3);
    expect(rows[0]).toEqual({ id: changeId(777, 'artist', 1), position: 1, mbid: id(1), data: lines[0] });
    expect(rows[1]!.data).toBe(long);
    // Raw `\r` inside a string is not JSON: stored re-escaped, the same value (diagnoseLine).
    expect(JSON.parse(rows[2]!.data)).toEqual({ name: 'Carriage\rReturn', id: id(3) });
    expect(rows.at(-1)).toMatchObject({ position: lines.length, mbid: id(9), data: lines.at(-1) });
    expect(rows.map((r) => r.position)).toEqual([1, 2, 3, ...Array.from({ length: 5001 }, (_, i) => 7 + i)]);
    const quarantined = store.sqlite
      .prepare('SELECT line, raw, reason FROM quarantine WHERE packet = 777 ORDER BY line')
      .all() as { line: number; raw: string; reason: string }[];
    expect(quarantined.map((q) => [q.line, q.raw, q.reason.split(':')[0]])).toEqual([
      [4, 'not json at all', 'not JSON'],
      [5, JSON.stringify({ id: 'not-an-mbid' }), 'invalid MBID "not-an-mbid"'],
      [6, '', 'empty line'],
    ]);
    expect(
      store.sqlite.prepare('SELECT status, change_count AS c FROM dumps WHERE packet = 777').get(),
    ).toEqual({
      status: 'SYNCED',
      c: lines.length - 3,
    });
  });

  it('serves pages of the stored lines byte for byte (one blob per page, sliced)', () => {
    const stored = store.sqlite
      .prepare('SELECT position, data FROM changes WHERE packet = 777 ORDER BY id')
      .all() as { position: number; data: string }[];
    const paged: { position: number; data: string }[] = [];
    for (let after = 0; ; ) {
      const page = changesPage(store, 777, 'artist', after, 97);
      if (page.length === 0) break;
      for (const row of page) paged.push({ position: row.position, data: row.data.toString('utf8') });
      after = page.at(-1)!.position;
    }
    expect(paged).toEqual(stored);
  });

  it('replaces an earlier import of the same dump: nothing twice', async () => {
    await importJsonDump(store, { path: archive, packet: 777 });
    const n = store.sqlite.prepare('SELECT count(*) AS n FROM changes WHERE packet = 777').get() as {
      n: number;
    };
    expect(n.n).toBe(lines.length - 3);
  });

  it('merges the search index after each import: one segment however many dumps came in', async () => {
    const other = openStore(join(dir.dir, 'merged.sqlite'));
    try {
      await importJsonDump(other, { path: archive, packet: 777 });
      for (const packet of [778, 779]) {
        const more = [1, 2, 3].map((n) =>
          JSON.stringify({ id: id(1000 + packet * 10 + n), name: `Imported ${n}` }),
        );
        const built = await writeJsonDump(join(dir.dir, `more-${packet}`), {
          packet,
          entity: 'label',
          lines: more,
        });
        await importJsonDump(other, { path: built.path, packet });
      }
      expect(other.sqlite.prepare(SEARCH_SEGMENTS_SQL).pluck().get()).toBe(1);
    } finally {
      other.close();
    }
  });

  it.each(['xz', 'lzma-native'] as const)('gives the same rows with the %s decoder', async (decoder) => {
    if (decoder === 'xz' && !hasXzProgram()) return;
    const other = openStore(join(dir.dir, `db-${decoder}.sqlite`));
    try {
      await importJsonDump(other, { path: archive, packet: 777, decoder });
      const digest = (s: Store) =>
        s.sqlite
          .prepare("SELECT group_concat(id || ':' || mbid || ':' || data, x'0a') AS d FROM changes")
          .get();
      expect(digest(other)).toEqual(digest(store));
    } finally {
      other.close();
    }
  });

  it('refuses a dump of another packet and stores nothing', async () => {
    await expect(importJsonDump(store, { path: archive, packet: 778 })).rejects.toThrow(
      /JSON dump artist of packet 778: REPLICATION_SEQUENCE is 777, expected 778/,
    );
    expect(store.sqlite.prepare('SELECT count(*) AS n FROM changes WHERE packet = 778').get()).toEqual({
      n: 0,
    });
  });

  it('names the file when the archive has no mbdump/<entity> member', async () => {
    const bare = join(dir.dir, 'bare.tar.xz');
    await writeTarArchive(bare, [{ name: 'README', content: 'no data\n' }], { compression: 'xz', mtime: 0 });
    await expect(dumpEntityOf(bare)).rejects.toThrow(ArchiveError);
    await expect(dumpEntityOf(bare)).rejects.toThrow(/no member mbdump\/<entity>/);
  });

  it('fails on a corrupt archive with the decoder message, storing nothing', async () => {
    const corrupt = join(dir.dir, 'corrupt.tar.xz');
    const { readFile } = await import('node:fs/promises');
    const bytes = await readFile(archive);
    bytes.fill(0x55, 200, 400);
    await writeFile(corrupt, bytes);
    await expect(importJsonDump(store, { path: corrupt, packet: 779, entity: 'artist' })).rejects.toThrow();
    expect(store.sqlite.prepare('SELECT count(*) AS n FROM changes WHERE packet = 779').get()).toEqual({
      n: 0,
    });
  });

  it('runs as `livefeed import FILE --packet N` and prints a summary', async () => {
    const db = join(dir.dir, 'cli.sqlite');
    const livefeed = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: ROOT });
    const args = ['import', archive, '--packet', '777', '--db', db, '--log-level', 'warn'];
    const { stdout, stderr } = await livefeed(...args.slice(0, -1), 'info');
    expect(stdout).toMatch(
      new RegExp(
        `as packet 777 artist: ${lines.length - 3} changes, 3 quarantined, ${lines.length} lines, \\d+\\.\\d [kM]B in `,
      ),
    );
    expect(stderr).not.toContain('change-stream-rewritten');
    // A file under 10 MB counts in kB: its bar moves, and never reads "1/1 MB" for a few kB.
    const progress = stderr
      .split('\n')
      .filter((line) => line.includes('"event":"progress"'))
      .map((line) => JSON.parse(line) as { unit: string; done: number; total: number });
    expect(progress.at(-1)).toMatchObject({
      unit: 'kB (xz)',
      total: Math.ceil(statSync(archive).size / 1e3),
    });
    expect(progress.at(-1)!.done).toBe(progress.at(-1)!.total);
    const cli = openStore(db);
    expect(cli.sqlite.prepare('SELECT count(*) AS n FROM changes').get()).toEqual({ n: lines.length - 3 });
    // Readers were served up to packet 800: importing 777 again stores behind them. The same
    // archive changes nothing they read, and says so; another copy of the dump is a rewrite.
    cli.sqlite.prepare("INSERT INTO meta (key, value) VALUES ('feed_served', '800')").run();
    cli.close();
    const rewrittenIn = (stderr: string) =>
      stderr
        .split('\n')
        .filter((line) => line.includes('change-stream-rewritten'))
        .map((line) => JSON.parse(line));
    const same = await livefeed(...args);
    expect(rewrittenIn(same.stderr)).toEqual([]);
    expect(same.stdout).toContain('; identical to the copy stored, so the change stream is unchanged');
    const other = await writeJsonDump(join(dir.dir, 'other'), {
      packet: 777,
      entity: 'artist',
      lines: [...lines.slice(0, -1), JSON.stringify({ id: id(99), name: 'One more' })],
    });
    const again = await livefeed('import', other.path, ...args.slice(2));
    expect(again.stdout).not.toContain('identical');
    expect(rewrittenIn(again.stderr)).toEqual([
      expect.objectContaining({ event: 'change-stream-rewritten', fromPacket: 777, epoch: 1 }),
    ]);
  });

  it('a dump of another packet than --packet, or a --packet that is no number, is exit 2 naming the flag; nothing stored', async () => {
    const db = join(dir.dir, 'wrong.sqlite');
    const livefeed = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: ROOT });
    await expect(livefeed('import', archive, '--packet', '5', '--db', db)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        `livefeed: --packet 5: ${archive} is the JSON dump of packet 777 (its REPLICATION_SEQUENCE); pass --packet 777`,
      ),
    });
    const after = openStore(db, { readonly: true });
    expect(after.sqlite.prepare('SELECT count(*) AS n FROM changes').get()).toEqual({ n: 0 });
    after.close();
    await expect(livefeed('import', archive, '--packet', 'abc', '--db', db)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--packet abc: expected a packet number'),
    });
  });
});
