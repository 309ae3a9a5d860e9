import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from '../../src/db/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { writeJsonDump } from './archives.js';
import { artistRow, writeReplicationPacket } from './replicationArchives.js';
import { syncWriterOf } from './stores.js';

/**
 * JSON dump lines for the typed entity tests. Seven entity types have real sample lines
 * (fixtures/samples); event, instrument, place and release group have none, so their lines are
 * written here in upstream's shape (musicbrainz-server, WebService/Serializer/JSON/2/*.pm and its
 * JSON lookup tests): same keys, same JSON types; the values are made up, the MBIDs fresh.
 */

const SAMPLED = ['area', 'artist', 'label', 'recording', 'release', 'series', 'work'] as const;

/** The real sample lines of `entity` (fixtures/samples/<entity>.jsonl). */
export function sampleLines(entity: (typeof SAMPLED)[number]): string[] {
  const file = fileURLToPath(new URL(`../../fixtures/samples/${entity}.jsonl`, import.meta.url));
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** MBIDs the tests look for. */
export const TYPED = {
  edSheeran: 'b8a7c51f-362c-4dcb-a259-bc6e0095f0a6',
  unitedKingdom: '8a754a16-0027-3a29-b6d7-2b40ea0481ed',
  hebdenBridge: '3bad79a2-895a-49ff-8277-fe683fade6b2',
  abstractLogix: '6c6c3bbb-76aa-4260-b842-f04936573c71',
  northCarolina: 'd4ab49e7-1d25-45e2-8659-b147e0ea3684',
  wishYouWereHere: 'f17a0f30-8eb1-4322-b54e-fb71edb78d7c',
  pinkFloyd: '83d91898-7763-47d7-b03b-b92132375c47',
  event: 'e0000000-0000-4000-8000-000000000001',
  instrument: 'e0000000-0000-4000-8000-000000000002',
  place: 'e0000000-0000-4000-8000-000000000003',
  releaseGroup: 'e0000000-0000-4000-8000-000000000004',
  /** A recording whose `length` is a string: not what upstream writes. */
  badRecording: 'e0000000-0000-4000-8000-000000000005',
  /** Known only from a deletion in a replication packet. */
  deletedOnly: 'e0000000-0000-4000-8000-000000000006',
  /** A recording whose line writes its `id` in upper case (packet 4). */
  shoutedRecording: 'e0000000-0000-4000-8000-00000000000a',
} as const;

const area = (id: string, name: string, codes: Record<string, string[]>) => ({
  id,
  name,
  'sort-name': name,
  disambiguation: '',
  type: null,
  'type-id': null,
  ...codes,
});

/** Lines of the four entity types without sample lines. */
export const CONSTRUCTED: Partial<Record<EntityType, object[]>> = {
  event: [
    {
      id: TYPED.event,
      name: 'Cool Festival',
      disambiguation: '',
      type: 'Festival',
      'type-id': 'b6ded574-b592-3f0e-b56e-5b5f06aa0678',
      time: '19:30',
      setlist: '',
      cancelled: false,
      'life-span': { begin: '2014-07-04', end: '2014-07-06', ended: true },
      aliases: [
        {
          name: 'El Festival Cool',
          'sort-name': 'Festival Cool, El',
          locale: null,
          primary: null,
          type: null,
        },
      ],
      tags: [{ name: 'festival', count: 2 }],
    },
  ],
  instrument: [
    {
      id: TYPED.instrument,
      name: 'kemençe',
      disambiguation: '',
      description: 'Bowed string instrument of the eastern Mediterranean.',
      type: 'String instrument',
      'type-id': 'cc00f97f-a64e-3a5b-9d5d-9e1d3c4a1c33',
      aliases: [],
      tags: [],
    },
  ],
  place: [
    {
      id: TYPED.place,
      name: 'A Test Place',
      disambiguation: 'A PLACE!',
      address: 'An Address',
      type: 'Venue',
      'type-id': 'cd92781a-a73f-30e8-a430-55d7521338db',
      coordinates: { latitude: 0.323, longitude: 1.234 },
      area: area(TYPED.unitedKingdom, 'United Kingdom', { 'iso-3166-1-codes': ['GB'] }),
      'life-span': { begin: '2013', end: null, ended: false },
    },
  ],
  'release-group': [
    {
      id: TYPED.releaseGroup,
      title: 'Wish You Were Here',
      disambiguation: '',
      'primary-type': 'Album',
      'primary-type-id': 'f529b476-6e62-324f-b0aa-1f3e33d313fc',
      'secondary-types': ['Compilation'],
      'secondary-type-ids': ['dd2a21e1-0c00-3729-a7a0-de60b84eb5d1'],
      'first-release-date': '1975-09-12',
      'artist-credit': [
        {
          name: 'Ed',
          joinphrase: ' & ',
          artist: { id: TYPED.edSheeran, name: 'Ed Sheeran', 'sort-name': 'Sheeran, Ed' },
        },
        {
          name: 'Pink Floyd',
          joinphrase: '',
          artist: { id: TYPED.pinkFloyd, name: 'Pink Floyd', 'sort-name': 'Pink Floyd' },
        },
      ],
      tags: [{ name: 'progressive rock', count: 5 }],
    },
  ],
};

/** A recording line whose `length` is a string, which upstream never writes (packet 4). */
export const BAD_RECORDING = {
  id: TYPED.badRecording,
  title: 'Bad length',
  length: 'three minutes',
  isrcs: [],
};

/** A recording line whose `id` is written in upper case, which upstream never does (packet 4). */
export const SHOUTED_RECORDING = {
  id: TYPED.shoutedRecording.toUpperCase(),
  title: 'Shouted id',
  length: 1000,
  isrcs: [],
};

/** The real release sample line with the `release-group` its web service lookup embeds (inc=release-groups). */
export function releaseWithGroup(): string {
  const release = JSON.parse(sampleLines('release')[0]!) as Record<string, unknown>;
  release['release-group'] = { id: TYPED.releaseGroup, title: 'Wish You Were Here', 'primary-type': 'Album' };
  return JSON.stringify(release);
}

/** Every line of packet 1: the sample lines of the seven sampled entity types and {@link CONSTRUCTED}. */
export function packetOneLines(): Record<EntityType, string[]> {
  const lines = {} as Record<EntityType, string[]>;
  for (const entity of SAMPLED) lines[entity] = sampleLines(entity);
  for (const [entity, objects] of Object.entries(CONSTRUCTED) as [EntityType, object[]][]) {
    lines[entity] = [...(lines[entity] ?? []), ...objects.map((o) => JSON.stringify(o))];
  }
  return lines;
}

/**
 * Stores through the real writers of either store (real xz and bzip2 archives): packet 1's JSON dumps
 * ({@link packetOneLines}), packet 2's release dump ({@link releaseWithGroup}) and replication
 * packet 3, which deletes {@link TYPED.deletedOnly}, and packet 4's recording dump ({@link BAD_RECORDING},
 * {@link SHOUTED_RECORDING}).
 */
export async function buildTypedEntities(store: Store | SyncStore, dir: string): Promise<void> {
  const writer = syncWriterOf(store);
  for (const [entity, lines] of Object.entries(packetOneLines()) as [EntityType, string[]][]) {
    const built = await writeJsonDump(join(dir, 'p1'), { packet: 1, entity, lines });
    await writer.ingestDump({ packet: 1, entity, archivePath: built.path, file: null });
  }
  const release = await writeJsonDump(join(dir, 'p2'), {
    packet: 2,
    entity: 'release',
    lines: [releaseWithGroup()],
  });
  await writer.ingestDump({ packet: 2, entity: 'release', archivePath: release.path, file: null });
  const path = await writeReplicationPacket(join(dir, 'p3'), {
    packet: 3,
    format: 'v2',
    rows: [
      {
        xid: 1,
        table: 'musicbrainz.artist',
        op: 'd',
        oldData: artistRow({ id: 77, gid: TYPED.deletedOnly, name: 'Gone' }),
      },
    ],
  });
  await writer.replication.storeReplicationPacket(3, path, {});
  const bad = await writeJsonDump(join(dir, 'p4'), {
    packet: 4,
    entity: 'recording',
    lines: [JSON.stringify(BAD_RECORDING), JSON.stringify(SHOUTED_RECORDING)],
  });
  await writer.ingestDump({ packet: 4, entity: 'recording', archivePath: bad.path, file: null });
}
