import { expect, it } from 'vitest';
import { jsonDumpPath } from '../../../src/feed/protocol/urls.js';
import { describeAppStores } from '../../support/appStores.js';
import { TEST_KEY_FINGERPRINT } from '../../support/archives.js';
import { type GqlResult, gql } from '../../support/harness.js';
import {
  BOOTSTRAP,
  buildLedgerOn,
  MALFORMED,
  PENDING_REPLICATION,
  QUARANTINE_PACKET,
  SYNC_TIME,
  WEBHOOK_NAMES,
} from '../../support/ledgerFeed.js';

// The ledger story (test/support/ledgerFeed.ts) synced by each store's writer, read over GraphQL.

const SYNCED_AT = SYNC_TIME.toISOString();
const cursorOf = (text: string) => Buffer.from(text).toString('base64url');

describeAppStores(
  'the ledger over GraphQL',
  (writer, dir, db) => buildLedgerOn(writer, dir, (sql, ...args) => db.rows(sql, ...args)),
  (_kind, run) => {
    const ask = (query: string, variables?: Record<string, unknown>) => gql(run().app, query, variables);

    it('latestPacket stops before the packet whose replication packet is PENDING', async () => {
      const answer = await ask('{ latestPacket { number timestamp syncedAt } }');
      expect(answer).toEqual({
        data: {
          latestPacket: {
            number: QUARANTINE_PACKET,
            timestamp: '2026-05-11T04:14:26.878674Z',
            syncedAt: SYNCED_AT,
          },
        },
      });
    });

    it("a packet's dumps: quarantined lines counted, files verified or with a missing signature, FAILED with its retry", async () => {
      const DUMPS = `query($n: Int!) { packet(number: $n) { number syncedAt dumps { entity status changeCount
        quarantineCount error attempts nextRetryAt file { name url signatureUrl signature fingerprint fetchedAt } } } }`;
      const quarantined = (await ask(DUMPS, { n: QUARANTINE_PACKET })).data!.packet;
      const release = quarantined.dumps.find((d: { entity: string }) => d.entity === 'RELEASE');
      const name = jsonDumpPath(QUARANTINE_PACKET, 'release');
      expect(release).toEqual({
        entity: 'RELEASE',
        status: 'SYNCED',
        changeCount: 2,
        quarantineCount: 2,
        error: null,
        attempts: 0,
        nextRetryAt: null,
        file: {
          name,
          url: `http://livefeed.test/files/${name}`,
          signatureUrl: null,
          signature: 'MISSING',
          fingerprint: null,
          fetchedAt: SYNCED_AT,
        },
      });
      const failedPacket = (await ask(DUMPS, { n: 186120 })).data!.packet;
      expect(failedPacket.syncedAt).toBeNull();
      const work = failedPacket.dumps.find((d: { entity: string }) => d.entity === 'WORK');
      expect(work).toMatchObject({ status: 'FAILED', attempts: 1, file: null });
      expect(work.error).toContain('corrupt archive');
      expect(Date.parse(work.nextRetryAt)).toBeGreaterThan(SYNC_TIME.getTime());
      const signed = (await ask(DUMPS, { n: 186100 })).data!.packet.dumps.find(
        (d: { entity: string }) => d.entity === 'AREA',
      );
      expect(signed.file).toMatchObject({
        signature: 'VERIFIED',
        fingerprint: TEST_KEY_FINGERPRINT,
        signatureUrl: `http://livefeed.test/files/${jsonDumpPath(186100, 'area')}.asc`,
      });
    });

    it('failures: the PENDING replication packet, then the FAILED dump, paged with cursors', async () => {
      const PAGE = `query($a: String) { failures(first: 1, after: $a) { totalCount pageInfo { hasNextPage endCursor }
        nodes { packet kind status entity fileName attempts updatedAt } } }`;
      const first: GqlResult = await ask(PAGE);
      expect(first.data!.failures).toMatchObject({
        totalCount: 2,
        pageInfo: { hasNextPage: true },
        nodes: [
          {
            packet: PENDING_REPLICATION,
            kind: 'REPLICATION_PACKET',
            status: 'PENDING',
            entity: null,
            attempts: 1,
            updatedAt: SYNCED_AT,
          },
        ],
      });
      const second: GqlResult = await ask(PAGE, { a: first.data!.failures.pageInfo.endCursor });
      expect(second.data!.failures).toMatchObject({
        pageInfo: { hasNextPage: false },
        nodes: [{ packet: 186120, kind: 'JSON_DUMP', status: 'FAILED', entity: 'WORK', fileName: null }],
      });
    });

    it('quarantine: the lines exactly as received, a NUL and four-byte characters included', async () => {
      const answer = await ask(
        `{ quarantine(entity: RELEASE) { totalCount nodes { packet entity line raw } } }`,
      );
      expect(answer.data!.quarantine).toEqual({
        totalCount: 2,
        nodes: [
          { packet: QUARANTINE_PACKET, entity: 'RELEASE', line: 2, raw: MALFORMED[0] },
          { packet: QUARANTINE_PACKET, entity: 'RELEASE', line: 4, raw: MALFORMED[1] },
        ],
      });
    });

    it.each([
      ['failures', `failure:${2 ** 60}:`],
      // `quarantine/*/*` is the cursor kind of quarantine without filters.
      ['quarantine', `quarantine/*/*:${QUARANTINE_PACKET}:release:${2 ** 60}`],
      ['quarantine', 'quarantine/*/*:1:release-groups:1'],
    ])('%s refuses the cursor %s as BAD_CURSOR', async (field, text) => {
      const answer = await ask(`{ ${field}(after: "${cursorOf(text)}") { totalCount } }`);
      expect(answer.errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
    });

    it('a cursor past every key (past 32 bits) answers an empty page', async () => {
      const answer = await ask(
        `{ failures(after: "${cursorOf(`failure:${2 ** 40}:`)}") { nodes { packet } } }`,
      );
      expect(answer).toEqual({ data: { failures: { nodes: [] } } });
    });

    it("the service's bootstrap and completeness: the imported types, never RECORDING", async () => {
      const answer = await ask(`{ service { bootstrap { dump packet entities at } completeEntityTypes
        completeness { entity fullDump complete } } }`);
      const service = answer.data!.service;
      expect(service.bootstrap).toEqual({ ...BOOTSTRAP.position, entities: ['AREA', 'LABEL'] });
      expect(service.completeEntityTypes).toEqual(['AREA', 'LABEL']);
      expect(service.completeness.filter((c: { fullDump: string | null }) => c.fullDump)).toEqual([
        { entity: 'AREA', fullDump: '20260510-001', complete: true },
        { entity: 'LABEL', fullDump: '20260510-001', complete: true },
      ]);
    });

    it('webhooks: by name, with filters, position and delivery record; never a secret', async () => {
      const answer =
        await ask(`{ webhooks { name url entities mbids position deliveredPacket attempts lastError
        nextRetryAt deliveredEvents deliveries failedDeliveries addedAt retiredAt } }`);
      const hooks = answer.data!.webhooks;
      expect(hooks.map((w: { name: string }) => w.name)).toEqual(WEBHOOK_NAMES);
      expect(hooks[1]).toEqual({
        name: 'b-hook',
        url: 'http://127.0.0.1:9/b-hook',
        entities: ['ARTIST', 'RELEASE_GROUP'],
        mbids: null,
        position: 'p186101',
        deliveredPacket: 186101,
        attempts: 0,
        lastError: null,
        nextRetryAt: null,
        deliveredEvents: 3,
        deliveries: 1,
        failedDeliveries: 0,
        addedAt: '2026-05-12T00:00:00.000Z',
        retiredAt: null,
      });
      expect(hooks[2]).toMatchObject({
        mbids: ['c0000000-0000-4000-8000-000000000001'],
        attempts: 1,
        lastError: expect.stringContaining('HTTP 503'),
        nextRetryAt: '2026-05-12T00:03:00.500Z',
      });
    });
  },
);
