import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { createApp } from '../../src/http/app.js';
import { testLogger, testService } from '../support/harness.js';
import { type Listening, listen } from '../support/listen.js';
import { readBundledManifest } from '../support/manifest.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

/** Debian's chromium (scripts/ci-setup.sh installs it); LIVEFEED_CHROMIUM overrides the path. */
const CHROMIUM = process.env.LIVEFEED_CHROMIUM ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** Flags that keep Chromium off the (closed) network and headless as root (.library machine notes). */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const manifest = readBundledManifest();

if (!HAVE_CHROMIUM) {
  console.warn(
    `browser test SKIPPED: no chromium at ${CHROMIUM} (install it with scripts/ci-setup.sh, or set LIVEFEED_CHROMIUM)`,
  );
}

describe.skipIf(!HAVE_CHROMIUM)(`GraphiQL in headless Chromium (${CHROMIUM})`, () => {
  let synced: SyncedDatabase;
  let store: Store;
  let server: Listening;
  let profile: string;

  beforeAll(async () => {
    synced = await syncedDatabase();
    store = openStore(synced.dbPath);
    server = await listen(
      createApp({ store, service: testService(), logger: testLogger(), dataDir: synced.dir }).handle,
    );
    profile = await mkdtemp(join(tmpdir(), 'livefeed-chromium-'));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    store?.close();
    await synced?.cleanup();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('opens /graphql, runs the example query and shows the newest packet', async () => {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const foreign: string[] = [];
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(server.origin) && !/^(data|blob):/.test(url)) foreign.push(url);
      });
      await page.goto(`${server.origin}/graphql`, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
      await expect(page.title()).resolves.toBe('livefeed');
      const answered = page.waitForResponse(
        (r) => r.url().startsWith(`${server.origin}/graphql`) && r.request().method() === 'POST',
      );
      await page.locator('.graphiql-execute-button').click();
      const response = page.locator('.graphiql-response');
      await response.getByText(`"number": ${manifest.lastPacket}`).first().waitFor({ timeout: 30_000 });
      // The example shows data first: the newest packet's changes by name and an entity's history
      // (the response editor draws only the lines in view, so the answer is read from the network).
      const answer = JSON.stringify(await (await answered).json());
      const last = manifest.packets.at(-1)!;
      for (const names of Object.values(last.jsonDumps).map((d) => d!.names)) {
        for (const name of names) expect(answer).toContain(name);
      }
      expect(answer).toMatch(/"history":\{"totalCount":\d+,"nodes":\[\{"packet":\d+/);
      expect(answer).not.toContain('"errors"');
      // GraphiQL's assets are served inline: the page works without any CDN.
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('?query= with variables opens that query (a shareable link), and a reload opens no new tab', async () => {
    const context = await chromium.launchPersistentContext(`${profile}-link`, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${server.origin}/graphql`, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
      const tabs = () => page.locator('.graphiql-tab').count();
      const before = await tabs();
      for (let i = 0; i < 2; i++) {
        await page.reload({ waitUntil: 'load' });
        await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
        expect(await tabs()).toBe(before);
      }
      const query = 'query Named($n: Int!) { packet(number: $n) { number dumps { entity changeCount } } }';
      const link = `${server.origin}/graphql?${new URLSearchParams({
        query,
        variables: JSON.stringify({ n: 186102 }),
        operationName: 'Named',
      })}`;
      await page.goto(link, { waitUntil: 'load' });
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 30_000 });
      await page.locator('.graphiql-execute-button').click();
      const response = page.locator('.graphiql-response');
      await response.getByText('"number": 186102').first().waitFor({ timeout: 30_000 });
      expect(await response.innerText()).toContain('"packet"');
    } finally {
      await context.close();
      await rm(`${profile}-link`, { recursive: true, force: true });
    }
  }, 90_000);
});
