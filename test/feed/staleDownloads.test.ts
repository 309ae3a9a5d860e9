import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { removeStaleDownloads } from '../../src/feed/staleDownloads.js';
import { tempDir } from '../support/harness.js';

let temp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  temp = await tempDir('lf-stale-');
});
afterAll(async () => {
  await temp?.cleanup();
});

it('removes stale downloads, kept bytes and sidecars, and keeps fresh ones and other files', async () => {
  const dir = join(temp.dir, 'stale');
  await mkdir(join(dir, 'partial'), { recursive: true });
  await writeFile(join(dir, 'a.download'), 'x');
  await writeFile(join(dir, 'partial', 'b.part'), 'x');
  await writeFile(join(dir, 'partial', 'b.json'), '{}');
  await writeFile(join(dir, 'keep.txt'), 'x');
  expect(await removeStaleDownloads(dir, 60_000)).toBe(0);
  expect(await removeStaleDownloads(dir, 60_000, Date.now() + 120_000)).toBe(3);
  expect(await readdir(dir)).toEqual(expect.arrayContaining(['keep.txt']));
  expect(await readdir(join(dir, 'partial'))).toEqual([]);
  expect(await removeStaleDownloads(join(temp.dir, 'missing'), 0)).toBe(0);
});
