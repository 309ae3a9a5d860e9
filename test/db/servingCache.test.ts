import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, SERVING_CACHE_BYTES, type Store } from '../../src/db/client.js';
import { openForServing } from '../../src/db/readOnly.js';
import { tempDir } from '../support/harness.js';

describe('the page cache of the connection that serves GraphQL', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const stores: Store[] = [];
  beforeEach(async () => {
    dir = await tempDir('lf-serving-cache-');
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) store.close();
    await dir.cleanup();
  });
  const cacheKib = (store: Store) => store.sqlite.pragma('cache_size', { simple: true });

  it('holds the MBID index of 1M entities (64 MB), while the writer keeps SQLite’s default', () => {
    const path = join(dir.dir, 'livefeed.db');
    const writer = openStore(path);
    stores.push(writer);
    const serving = openForServing(path);
    stores.push(serving);
    expect(cacheKib(serving)).toBe(-(SERVING_CACHE_BYTES / 1024));
    expect(SERVING_CACHE_BYTES).toBe(64 * 1024 * 1024);
    expect(cacheKib(writer)).not.toBe(cacheKib(serving));
  });
});
