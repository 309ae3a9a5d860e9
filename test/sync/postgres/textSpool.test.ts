import { readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { TextSpool } from '../../../src/sync/postgres/textSpool.js';

/**
 * A replication packet's staged COPY text on PostgreSQL (sync/postgres/replicationStaging.ts): in
 * memory up to a bound, then in an unlinked temporary file, read back once in order.
 */

const spools = () => readdirSync(tmpdir()).filter((name) => name.startsWith('livefeed-spool-'));
// Open descriptors of this process that point at a deleted file: the spool's, while it has one.
const deletedFiles = () =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).endsWith('(deleted)');
    } catch {
      return false;
    }
  }).length;

const rows = Array.from({ length: 5_000 }, (_, i) => `${i},"row ${i} ""quoted"" ü ${'x'.repeat(i % 50)}"\n`);

describe('TextSpool', () => {
  it('gives back in memory what it was given, in order, once', async () => {
    const spool = new TextSpool();
    expect(spool.empty).toBe(true);
    for (const row of rows) spool.add(row);
    expect(spool.empty).toBe(false);
    expect(deletedFiles()).toBe(0);
    expect(await text(spool.stream(7))).toBe(rows.join(''));
    expect(spool.empty).toBe(true);
  });

  it('beyond its bound, the same text through an unlinked file, closed once read', async () => {
    const before = deletedFiles();
    const spool = new TextSpool(1_000);
    for (const row of rows) spool.add(row);
    // The file is open but has no name: nothing is left behind, whatever ends the process.
    expect(deletedFiles()).toBe(before + 1);
    expect(spools()).toEqual([]);
    expect(await text(spool.stream())).toBe(rows.join(''));
    expect(deletedFiles()).toBe(before);
    expect(spool.empty).toBe(true);
  });

  it('close lets go of a file whose stream was dropped before it was read', () => {
    const before = deletedFiles();
    const spool = new TextSpool(10);
    for (const row of rows.slice(0, 100)) spool.add(row);
    spool.stream().destroy();
    expect(deletedFiles()).toBe(before + 1);
    spool.close();
    expect(deletedFiles()).toBe(before);
  });

  it('close lets go of a file never read', () => {
    const before = deletedFiles();
    const spool = new TextSpool(10);
    for (const row of rows.slice(0, 100)) spool.add(row);
    expect(deletedFiles()).toBe(before + 1);
    spool.close();
    spool.close();
    expect(deletedFiles()).toBe(before);
    expect(spool.empty).toBe(true);
  });
});
