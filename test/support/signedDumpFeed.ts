import { join } from 'node:path';
import type { EntityType } from '../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { createTestKeyHome, signFile, signOtherBytes, writeJsonDump } from './archives.js';
import { tempDir } from './harness.js';

/** One JSON dump of a {@link signedDumpFeed} and its `.asc`. */
export interface SignedDump {
  packet: number;
  entity: EntityType;
  lines: string[];
  /**
   * `good` (default): signed by the test key; `other bytes`: a well-formed signature by the test
   * key over other bytes, which can never verify; `none`: no `.asc` at all.
   */
  signature?: 'good' | 'other bytes' | 'none';
}

/**
 * A sample feed (a real HTTP server on port 0, src/samplefeed/server.ts) over `dumps`, built with
 * the real `tar`, `xz` and `gpg` under `<work>/feed`, in the order given. `work` is a new temp
 * folder (prefix `prefix`) for the test's own files; the caller closes `feed` and cleans `work`.
 */
export async function signedDumpFeed(
  prefix: string,
  dumps: readonly SignedDump[],
): Promise<{ feed: SampleFeed; work: Awaited<ReturnType<typeof tempDir>> }> {
  const work = await tempDir(prefix);
  const root = join(work.dir, 'feed');
  const keyHome = await createTestKeyHome();
  try {
    const unverifiable: string[] = [];
    for (const dump of dumps) {
      const built = await writeJsonDump(root, dump);
      if (dump.signature === 'other bytes') unverifiable.push(built.path);
      else if (dump.signature !== 'none')
        await signFile(built.path, keyHome, { fingerprint: keyHome.fingerprint });
    }
    await signOtherBytes(unverifiable, keyHome, work.dir);
  } finally {
    await keyHome.close();
  }
  return { feed: await startSampleFeed({ root }), work };
}
