import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Removes downloads that no run will use (feed/partial.ts): completed `<uuid>.download` files and kept partial bytes
 * older than `olderThanMs` (left by a crash between download and store; a newer one may belong to
 * a sync still running). Missing folders are fine.
 */
export async function removeStaleDownloads(
  tmpDir: string,
  olderThanMs: number,
  now = Date.now(),
): Promise<number> {
  let removed = 0;
  for (const dir of [tmpDir, join(tmpDir, 'partial')]) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!/\.(download|part|json)$/.test(name)) continue;
      const file = join(dir, name);
      const info = await stat(file).catch(() => undefined);
      if (info?.isFile() && now - info.mtimeMs > olderThanMs) {
        await rm(file, { force: true });
        removed++;
      }
    }
  }
  return removed;
}
