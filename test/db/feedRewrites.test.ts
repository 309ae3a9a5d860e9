import { describe, expect, it } from 'vitest';
import { epochPositionText, parseEpochPosition } from '../../src/db/feedPosition.js';
import {
  currentEpoch,
  type FeedRewrite,
  parseRewrites,
  rewriteEpochAt,
  rewritesText,
  rewrittenBefore,
  withJoinedRewrite,
  withRewrite,
} from '../../src/db/feedRewrites.js';
import { changeId } from '../../src/db/keys.js';
import { oldestPacketAwaitedOf } from '../../src/db/webhookQueries.js';

const MBID = '0383dadf-2a4e-4d10-a46a-e9e041da8eb3';

describe('rewrites of the change stream (db/feedRewrites.ts)', () => {
  it('a position made before a rewrite at or before its packet is refused from the lowest such packet', () => {
    let rewrites: FeedRewrite[] = [];
    rewrites = withRewrite(rewrites, 120); // epoch 1
    rewrites = withRewrite(rewrites, 100); // epoch 2
    rewrites = withRewrite(rewrites, 150); // epoch 3
    expect(currentEpoch(rewrites)).toBe(3);
    const at = (packet: number) => ({ at: 'packetEnd', packet }) as const;
    expect(rewrittenBefore(rewrites, 0, at(130))).toBe(100);
    expect(rewrittenBefore(rewrites, 1, at(130))).toBe(100);
    expect(rewrittenBefore(rewrites, 2, at(130))).toBeUndefined(); // 150 lies after it: read on
    expect(rewrittenBefore(rewrites, 2, at(150))).toBe(150);
    expect(rewrittenBefore(rewrites, 3, at(500))).toBeUndefined();
    // Inside a packet: a change or a removal of packet 150 is behind a rewrite of 150.
    expect(rewrittenBefore(rewrites, 2, { at: 'change', id: changeId(150, 'artist', 3) })).toBe(150);
    expect(rewrittenBefore(rewrites, 2, { at: 'change', id: changeId(149, 'work', 9) })).toBeUndefined();
    expect(rewrittenBefore(rewrites, 2, { at: 'removal', packet: 150, mbid: MBID, kind: 'MERGED' })).toBe(
      150,
    );
  });

  it('a rewrite joined to the last (same transaction) refuses every older position as the two would', () => {
    const before = withRewrite(withRewrite([], 300), 200); // epochs 1 and 2
    const two = withRewrite(before, 120); // epoch 3, then 4 for 110
    const apart = withRewrite(withRewrite(two, 110), 140);
    const joined = withJoinedRewrite(withJoinedRewrite(two, 110), 140);
    expect(joined).toEqual([...before, { epoch: 3, packet: 110 }]);
    expect(withJoinedRewrite([], 90)).toEqual([{ epoch: 1, packet: 90 }]);
    // Positions made in epoch 2 or before, the only ones that can exist: the same refusals.
    for (const epoch of [0, 1, 2])
      for (const packet of [100, 110, 115, 120, 130, 140, 250, 400]) {
        const at = { at: 'packetEnd', packet } as const;
        expect(rewrittenBefore(joined, epoch, at)).toBe(rewrittenBefore(apart, epoch, at));
      }
  });

  it('keeps at most 1,000 rewrites by merging the oldest into the next: refused too often, never too late', () => {
    let rewrites: FeedRewrite[] = [];
    for (let i = 0; i < 1005; i++) rewrites = withRewrite(rewrites, 1000 - (i % 7));
    expect(rewrites).toHaveLength(1000);
    expect(currentEpoch(rewrites)).toBe(1005);
    expect(rewrites.map((r) => r.epoch)).toEqual([...rewrites.map((r) => r.epoch)].sort((a, b) => a - b));
    // Every epoch's cursor is refused at least as early as with every rewrite kept.
    expect(rewrittenBefore(rewrites, 0, { at: 'packetEnd', packet: 5000 })).toBe(994);
    // The six oldest (epochs 1..6, packets 1000..995) became one: epoch 6, the lowest packet.
    expect(rewrites[0]).toEqual({ epoch: 6, packet: 995 });
    expect(rewrites[1]!.epoch).toBe(7);
    // Against every rewrite kept: each cursor is refused from the same packet or an earlier one.
    const all: FeedRewrite[] = Array.from({ length: 1005 }, (_, i) => ({
      epoch: i + 1,
      packet: 1000 - (i % 7),
    }));
    for (let epoch = 0; epoch <= 1005; epoch += 1)
      for (const packet of [993, 994, 996, 999, 1000, 2000]) {
        const kept = rewrittenBefore(all, epoch, { at: 'packetEnd', packet });
        const merged = rewrittenBefore(rewrites, epoch, { at: 'packetEnd', packet });
        if (kept !== undefined) expect(merged).toBeLessThanOrEqual(kept);
        if (epoch >= 6) expect(merged).toBe(kept);
      }
  });

  it('labels an event with the last store at or before its packet: later stores leave it as it was', () => {
    const rewrites = withRewrite(withRewrite(withRewrite([], 120), 100), 150);
    expect(rewriteEpochAt(rewrites, 99)).toBe(0);
    expect(rewriteEpochAt(rewrites, 100)).toBe(2);
    expect(rewriteEpochAt(rewrites, 130)).toBe(2);
    expect(rewriteEpochAt(rewrites, 150)).toBe(3);
    expect(rewriteEpochAt(withRewrite(rewrites, 400), 130)).toBe(2);
  });

  it('keeps the history a webhook will be sent again: pruning holds from the packet stored behind it', () => {
    const rewrites = withRewrite([], 120);
    const hook = (cursor: string | null) => [{ cursor, retiredAt: null }];
    expect(oldestPacketAwaitedOf(hook('p150'), rewrites)).toBe(120);
    expect(oldestPacketAwaitedOf(hook('p150@1'), rewrites)).toBe(151);
    expect(oldestPacketAwaitedOf(hook('p110'), rewrites)).toBe(111);
    expect(oldestPacketAwaitedOf(hook(null), rewrites)).toBe(0);
    expect(
      oldestPacketAwaitedOf([{ cursor: 'p150', retiredAt: '2026-11-29T00:00:00Z' }], rewrites),
    ).toBeUndefined();
  });

  it('round-trips through the meta value; none stored means epoch 0', () => {
    const rewrites = withRewrite(withRewrite([], 7), 3);
    expect(parseRewrites(rewritesText(rewrites))).toEqual(rewrites);
    expect(parseRewrites(undefined)).toEqual([]);
    expect(currentEpoch([])).toBe(0);
  });

  it('a position text carries its epoch after "@", and reads as before without one', () => {
    const position = { at: 'change', id: changeId(186100, 'recording', 12) } as const;
    expect(epochPositionText({ position, epoch: 0 })).toBe(`c${position.id}`);
    expect(epochPositionText({ position, epoch: 4 })).toBe(`c${position.id}@4`);
    expect(parseEpochPosition(`c${position.id}@4`)).toEqual({ position, epoch: 4 });
    expect(parseEpochPosition(`c${position.id}`)).toEqual({ position, epoch: 0 });
    expect(parseEpochPosition(`r186100/${MBID}/DELETED@2`)).toEqual({
      position: { at: 'removal', packet: 186100, mbid: MBID, kind: 'DELETED' },
      epoch: 2,
    });
    expect(parseEpochPosition('p186100@')).toBeUndefined();
    expect(parseEpochPosition('p186100@x')).toBeUndefined();
    expect(parseEpochPosition('@3')).toBeUndefined();
  });
});
