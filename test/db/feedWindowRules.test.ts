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

  it('tells a cursor rewritten below a later pruning cutoff to reload (HISTORY_PRUNED), not to read from there', () => {
    const facts = { pruned: 120, frontier: 130, rewrites: [{ epoch: 1, packet: 99 }] };
    const after = { at: 'packetEnd' as const, packet: 125 };
    const error = thrown(() => windowOf({ after, epoch: 0 }, facts));
    expect(error).toBeInstanceOf(HistoryPrunedError);
    expect((error as HistoryPrunedError).historyFrom).toBe(120);
    // A cursor of the new epoch reads on.
    expect(windowOf({ after, epoch: 1 }, facts)).toMatchObject({ bound: 130 });
    // Within the history held, the rewrite's own packet is where to read again.
    const held = thrown(() =>
      windowOf({ after, epoch: 0 }, { ...facts, rewrites: [{ epoch: 1, packet: 121 }] }),
    );
    expect(held).toBeInstanceOf(HistoryRewrittenError);
    expect((held as HistoryRewrittenError).from).toBe(121);
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
