import { appendFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadRestartedError, StreamedDownload } from '../../src/feed/streamedDownload.js';
import { tempDir } from '../support/harness.js';

/**
 * Readers of a download as it arrives (issue 16). The test plays FeedClient.download's part on a
 * real file: it appends, tells the tap, and renames the finished file as PartialDownload does.
 */
let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('lf-streamed-');
});
afterAll(async () => {
  await dir?.cleanup();
});

describe('StreamedDownload', () => {
  it('gives every reader all bytes in order while they arrive, across a resumed body and the final rename', async () => {
    const part = join(dir.dir, 'a.part');
    const done = join(dir.dir, 'a.download');
    const tap = new StreamedDownload();
    const first = text(tap.reader());
    await writeFile(part, '');
    tap.begin(part, 0, null);
    await appendFile(part, 'hello ');
    tap.wrote(6);
    // The connection is cut; the next body continues at byte 6 (Range).
    tap.begin(part, 6, null);
    await appendFile(part, 'world');
    tap.wrote(11);
    await rename(part, done);
    tap.finish({ path: done, size: 11, sha256: '' });
    expect(await first).toBe('hello world');
    // A reader that starts after the end reads the final file.
    expect(await text(tap.reader())).toBe('hello world');
    expect(await tap.started).toBe(true);
  });

  it('fails a reader that read bytes of a body which then started over', async () => {
    const part = join(dir.dir, 'b.part');
    const tap = new StreamedDownload();
    const chunks = tap.reader()[Symbol.asyncIterator]();
    await writeFile(part, 'abc');
    tap.begin(part, 0, null);
    tap.wrote(3);
    expect(String((await chunks.next()).value)).toBe('abc');
    // The server ignored the range: a new body from byte 0 (its bytes may differ).
    await writeFile(part, 'xyzxyz');
    tap.begin(part, 0, null);
    tap.wrote(6);
    await expect(chunks.next()).rejects.toBeInstanceOf(DownloadRestartedError);
  });

  it('passes the download failure and a 404 to the readers', async () => {
    const failed = new StreamedDownload();
    const reader = text(failed.reader());
    failed.fail(new Error('connection reset'));
    await expect(reader).rejects.toThrow('connection reset');
    await expect(failed.started).rejects.toThrow('connection reset');
    const missing = new StreamedDownload();
    missing.finish('missing');
    expect(await missing.started).toBe(false);
  });
});
