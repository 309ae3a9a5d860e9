import { expect, it } from 'vitest';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { describeAppStores } from '../support/appStores.js';
import { gql } from '../support/harness.js';
import { syncSampleFeedOn } from '../support/synced.js';

/** Packet 186102 of the bundled feed has RECORDING and WORK changes (fixtures/feed/MANIFEST.json). */
const BOTH = 186102;
const cursor = (text: string) => Buffer.from(text).toString('base64url');

/**
 * The bundled feed synced by either store's sync writer, then what the sync records for a 404 of
 * a packet that has not settled yet, and for a failed file.
 */
async function build(writer: SyncStore, dir: string): Promise<void> {
  await syncSampleFeedOn(writer, dir);
  await writer.markPending(186124, 'artist', new Date().toISOString());
  await writer.recordFailure({ packet: 186124, entity: 'label' }, 'HTTP 500 after 5 attempts', new Date());
}

describeAppStores(
  'changes(packet, entity): errors for what is not here, cursors of their own connection',
  build,
  (kind, run) => {
    const app = () => run().app;

    it('a packet this instance has not synced is NOT_FOUND, not an empty page', async () => {
      const { errors, data } = await gql(app(), '{ changes(packet: 186099, entity: ARTIST) { totalCount } }');
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', packet: 186099 });
      expect(errors?.[0]?.message).toContain('has not synced packet 186099');
      expect(data?.changes ?? null).toBeNull();
    });

    it('a PENDING dump answers PENDING; a FAILED one NOT_FOUND with its reason', async () => {
      const pending = await gql(app(), '{ changes(packet: 186124, entity: ARTIST) { totalCount } }');
      expect(pending.errors?.[0]?.extensions).toMatchObject({ code: 'PENDING', status: 'PENDING' });
      const failed = await gql(app(), '{ changes(packet: 186124, entity: LABEL) { totalCount } }');
      expect(failed.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 'FAILED' });
      expect(failed.errors?.[0]?.message).toContain('HTTP 500 after 5 attempts');
    });

    it('a settled packet without a dump of that type is still an empty page (NO_CHANGES)', async () => {
      const { errors, data } = await gql(
        app(),
        `{ changes(packet: ${BOTH}, entity: AREA) { totalCount nodes { mbid } } }`,
      );
      expect(errors).toBeUndefined();
      expect(data!.changes).toEqual({ totalCount: 0, nodes: [] });
    });

    it('a RECORDING cursor is refused on WORK (BAD_CURSOR), and accepted on RECORDING', async () => {
      const first = await gql(
        app(),
        `{ changes(packet: ${BOTH}, entity: RECORDING, first: 1) { pageInfo { endCursor } } }`,
      );
      const end = first.data!.changes.pageInfo.endCursor as string;
      const onWork = await gql(
        app(),
        `{ changes(packet: ${BOTH}, entity: WORK, after: "${end}") { totalCount } }`,
      );
      expect(onWork.errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
      const onRecording = await gql(
        app(),
        `{ changes(packet: ${BOTH}, entity: RECORDING, first: 1, after: "${end}") { nodes { position } } }`,
      );
      expect(onRecording.errors).toBeUndefined();
      expect(onRecording.data!.changes.nodes[0].position).toBe(2);
    });

    it.each([
      ['change:-1', cursor('change:-1')],
      ['a packet cursor', cursor('packet:186100')],
      ['another packet of the same type', cursor('change/186101/recording:1')],
    ])('%s is BAD_CURSOR', async (_what, after) => {
      const { errors } = await gql(
        app(),
        `{ changes(packet: ${BOTH}, entity: RECORDING, after: "${after}") { totalCount } }`,
      );
      expect(errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
    });

    it('after: "" is no cursor: the first page', async () => {
      const query = (after: string) =>
        `{ changes(packet: ${BOTH}, entity: RECORDING, first: 2${after}) { nodes { position } pageInfo { hasPreviousPage } } }`;
      const none = await gql(app(), query(''));
      const empty = await gql(app(), query(', after: ""'));
      expect(empty.errors).toBeUndefined();
      expect(empty.data).toEqual(none.data);
      // `packets` reads SQLite until the ledger types are ported (docs/POSTGRES_PORT.md step 4).
      if (kind === 'postgres') return;
      const packets = await gql(app(), '{ packets(first: 1, after: "") { nodes { number } } }');
      expect(packets.errors).toBeUndefined();
      expect(packets.data!.packets.nodes).toHaveLength(1);
    });
  },
);
