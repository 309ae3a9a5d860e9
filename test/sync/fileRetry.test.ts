import { describe, expect, it } from 'vitest';
import { ArchiveError, FeedNetworkError } from '../../src/feed/errors.js';
import {
  FeedUnavailableError,
  isUnreadableDownload,
  MAX_NETWORK_FAILURES_IN_A_ROW,
  nextRetryAt,
  noteFileOutcome,
} from '../../src/sync/fileRetry.js';
import { SignatureError } from '../../src/sync/verifier.js';

describe('per-file retry policy', () => {
  it('waits 1 min doubling per failure, at most 30 min', () => {
    const at = new Date('2026-05-11T21:00:00.000Z');
    const minutes = [1, 2, 3, 4, 5, 6, 9].map(
      (n) => (Date.parse(nextRetryAt(n, at)) - at.getTime()) / 60_000,
    );
    expect(minutes).toEqual([1, 2, 4, 8, 16, 30, 30]);
  });

  it('tells broken transfers from broken files', () => {
    const lzma = Object.assign(new Error('Data is corrupt'), { name: 'LZMA_DATA_ERROR' });
    expect(isUnreadableDownload(lzma)).toBe(true);
    expect(
      isUnreadableDownload(new ArchiveError('JSON dump area of packet 7: xz: Compressed data is corrupt')),
    ).toBe(true);
    expect(isUnreadableDownload(new Error('Invalid tar header. Maybe the tar is corrupted'))).toBe(true);
    // A cut .asc or a body that does not decompress: a new download may cure it.
    expect(
      isUnreadableDownload(
        new SignatureError('signature of x is INVALID: not an OpenPGP signature', 'malformed'),
      ),
    ).toBe(true);
    expect(isUnreadableDownload(new SignatureError('x does not decompress either', 'damaged'))).toBe(true);
    // Deterministic: the same bytes fail the same way (FEED.md, Signatures).
    for (const kind of ['mismatch', 'unknown-key', 'refused-algorithm', 'key-rejected', 'missing'] as const) {
      expect(isUnreadableDownload(new SignatureError(`signature of x: ${kind}`, kind))).toBe(false);
    }
    expect(
      isUnreadableDownload(
        new ArchiveError('JSON dump area of packet 7: REPLICATION_SEQUENCE is 8, expected 7'),
      ),
    ).toBe(false);
    expect(
      isUnreadableDownload(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })),
    ).toBe(false);
  });

  it('ends a pass after several files in a row fail on the network', () => {
    const pass = {};
    const down = new FeedNetworkError('http://feed/x', 'ECONNRESET', 5);
    for (let i = 1; i < MAX_NETWORK_FAILURES_IN_A_ROW; i++) noteFileOutcome(pass, down);
    noteFileOutcome(pass);
    for (let i = 1; i < MAX_NETWORK_FAILURES_IN_A_ROW; i++) noteFileOutcome(pass, down);
    expect(() => noteFileOutcome(pass, down)).toThrow(FeedUnavailableError);
    // Another kind of failure does not count.
    const other = {};
    for (let i = 0; i < 5; i++) noteFileOutcome(other, new ArchiveError('bad'));
  });
});
