import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPatch, type Operation } from 'rfc6902';
import { expect, it } from 'vitest';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { describeAppStores } from '../../support/appStores.js';
import { writeJsonDump } from '../../support/archives.js';
import { gql } from '../../support/harness.js';

// A real artist line (fixtures/samples), then the same artist edited as upstream would write it.
const original = JSON.parse(
  readFileSync(new URL('../../../fixtures/samples/artist.jsonl', import.meta.url), 'utf8').split('\n')[0]!,
) as Record<string, unknown> & { id: string; aliases: unknown[] };
const edited = {
  ...original,
  name: 'Edward Sheeran',
  aliases: original.aliases.slice(1),
  tags: [{ name: 'pop', count: 3 }],
};

const QUERY = `query($p: Int!) {
  changes(packet: $p, entity: ARTIST) {
    nodes { mbid packet timestamp data previous { packet data } diff { op path from value } }
  }
}`;

/** The two versions as JSON dumps of packets 20 and 21, each with its own TIMESTAMP. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  const lines: [number, object][] = [
    [20, original],
    [21, edited],
  ];
  for (const [packet, line] of lines) {
    const built = await writeJsonDump(join(dir, `dump-${packet}`), {
      packet,
      entity: 'artist',
      lines: [JSON.stringify(line)],
      timestamp: `2026-05-11 ${packet}:14:26.878674+00`,
    });
    await writer.ingestDump({ packet, entity: 'artist', archivePath: built.path, file: null });
  }
}

describeAppStores('EntityChange.timestamp, previous and diff (RFC 6902)', build, (_kind, run) => {
  it('the first held version has no previous and no diff; its timestamp is the packet TIMESTAMP', async () => {
    const answer = await gql(run().app, QUERY, { p: 20 });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.changes.nodes).toEqual([
      expect.objectContaining({
        packet: 20,
        timestamp: '2026-05-11T20:14:26.878674Z',
        previous: null,
        diff: null,
      }),
    ]);
  });

  it('diff is the patch from the previous version: rfc6902 applies it to give this version', async () => {
    const answer = await gql(run().app, QUERY, { p: 21 });
    expect(answer.errors).toBeUndefined();
    const [node] = answer.data!.changes.nodes;
    expect(node.previous).toEqual({ packet: 20, data: original });
    expect(node.timestamp).toBe('2026-05-11T21:14:26.878674Z');
    // GraphQL answers null for fields an operation does not have; RFC 6902 leaves them out.
    const patch = (node.diff as Record<string, unknown>[]).map(
      (op) => Object.fromEntries(Object.entries(op).filter(([, v]) => v !== null)) as unknown as Operation,
    );
    const target = structuredClone(original);
    expect(applyPatch(target, patch)).toEqual(patch.map(() => null));
    expect(target).toEqual(edited);
    expect(patch).toContainEqual({ op: 'replace', path: '/name', value: 'Edward Sheeran' });
    expect(patch).toContainEqual({ op: 'add', path: '/tags', value: [{ name: 'pop', count: 3 }] });
    expect(patch.some((op) => op.op === 'remove' && op.path.startsWith('/aliases/'))).toBe(true);
  });
});
