import { describe, expect, it } from 'vitest';
import { HistoryRewrittenError } from '../../src/db/feedRewrites.js';
import { HistoryPrunedError, windowOf } from '../../src/db/feedWindow.js';

/** The window rule both stores share (db/feedWindow.ts `windowOf`), on facts given directly. */
describe('windowOf', () => {
  const thrown = (run: () => unknown): unknown => {
    try {
      run();
    } catch (error) {
      return error;
    }
    throw new Error('nothing thrown');
  };

  it('sends a cursor rewritten below a later pruning cutoff back to the cutoff, a place it can read from', () => {
    const facts = { pruned: 120, frontier: 130, rewrites: [{ epoch: 1, packet: 99 }] };
    const after = { at: 'packetEnd' as const, packet: 125 };
    const error = thrown(() => windowOf({ after, epoch: 0 }, facts));
    expect(error).toBeInstanceOf(HistoryRewrittenError);
    expect((error as HistoryRewrittenError).from).toBe(120);
    // Reading again from there (the new epoch) is inside the history held.
    const again = windowOf({ after: { at: 'packetEnd', packet: 119 }, epoch: 1 }, facts);
    expect(again).toMatchObject({ bound: 130 });
    // Without pruning the rewrite's own packet stays the place to start again.
    const unpruned = thrown(() => windowOf({ after, epoch: 0 }, { ...facts, pruned: undefined }));
    expect((unpruned as HistoryRewrittenError).from).toBe(99);
  });

  it('names the argument that lies before the history held', () => {
    const facts = { pruned: 120, frontier: 130, rewrites: [], sincePacket: 100 };
    expect((thrown(() => windowOf({ since: '2000-01-01T00:00:00Z' }, facts)) as Error).message).toMatch(
      /"since" asks for events before it/,
    );
    const cursor = thrown(() => windowOf({ after: { at: 'packetEnd', packet: 110 } }, facts));
    expect(cursor).toBeInstanceOf(HistoryPrunedError);
    expect((cursor as Error).message).toMatch(/start again without a cursor \(from packet 120\)/);
  });
});
