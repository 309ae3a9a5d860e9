import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { tempDir, testApp } from './harness.js';

/** The app of {@link appOverBuiltStore}: read it in tests, once `beforeAll` has run. */
export interface AppFixture {
  readonly app: ReturnType<typeof testApp>;
}

/**
 * Registers `beforeAll`/`afterAll` hooks (call it inside a `describe`) that make a real SQLite file
 * in a temp folder named with `prefix`, let `build` fill it through a writer connection (closed
 * afterwards, as a sync would leave it), and serve it through {@link testApp}; the folder goes after
 * the suite. `build` gets the writer store and the folder (for its archives).
 */
export function appOverBuiltStore(
  prefix: string,
  build: (store: Store, dir: string) => Promise<void>,
): AppFixture {
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
  let app: ReturnType<typeof testApp> | undefined;
  beforeAll(async () => {
    dir = await tempDir(prefix);
    const path = join(dir.dir, 'livefeed.db');
    const store = openStore(path);
    try {
      await build(store, dir.dir);
    } finally {
      store.close();
    }
    app = testApp(path, dir.dir);
  }, 60_000);
  afterAll(async () => {
    app?.store.close();
    await dir?.cleanup();
  });
  return {
    get app() {
      if (!app) throw new Error('the app is made in beforeAll: read it inside a test');
      return app;
    },
  };
}
