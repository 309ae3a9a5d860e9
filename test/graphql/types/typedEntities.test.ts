import { readFile } from 'node:fs/promises';
import { getNamedType, isObjectType } from 'graphql';
import { expect, it, vi } from 'vitest';
import { ENTITY_TYPES, type EntityType } from '../../../src/feed/entities.js';
import { schema } from '../../../src/graphql/schema.js';
import { TYPE_NAMES } from '../../../src/graphql/types/musicbrainz/common.js';
import { describeAppStores } from '../../support/appStores.js';
import { gql } from '../../support/harness.js';
import {
  buildTypedEntities,
  packetOneLines,
  releaseWithGroup,
  SHOUTED_RECORDING,
  TYPED,
} from '../../support/typedEntityLines.js';
import { expectedOf, INTERFACE, selection, TYPES } from '../../support/typedEntitySpec.js';

const fragments = Object.entries(TYPES)
  .map(([type, spec]) => `... on ${type} { ${selection(spec)} }`)
  .join(' ');
const TYPED_SELECTION = `__typename ${selection(INTERFACE)} ${fragments}`;

describeAppStores(
  'typed entities: MusicBrainzEntity and its eleven types (yoga.fetch, real archives)',
  buildTypedEntities,
  (_kind, run) => {
    it.each(ENTITY_TYPES.map((e) => [e]))(
      'every typed field of each %s line is the value of its JSON field, null where the line has none',
      async (entity) => {
        const lines = packetOneLines()[entity as EntityType];
        expect(lines.length).toBeGreaterThan(0);
        const answer = await gql(
          run().app,
          `{ changes(packet: 1, entity: ${entity.toUpperCase().replace('-', '_')}, first: 20) { nodes { mbid type entity { ${TYPED_SELECTION} } } } }`,
        );
        expect(answer.errors).toBeUndefined();
        const nodes = answer.data!.changes.nodes;
        const typeName = TYPE_NAMES[entity as EntityType];
        expect(nodes.map((n: { entity: unknown }) => n.entity)).toEqual(
          lines.map((line) => {
            const json = JSON.parse(line) as unknown;
            return {
              __typename: typeName,
              ...expectedOf(json, INTERFACE),
              ...expectedOf(json, TYPES[typeName]!),
            };
          }),
        );
        expect(nodes.every((n: { type: string }) => n.type === entity.toUpperCase().replace('-', '_'))).toBe(
          true,
        );
      },
    );

    it('the spec of these tests covers every field of the eleven types but the links to Entity', () => {
      for (const typeName of Object.values(TYPE_NAMES)) {
        const type = schema.getType(typeName);
        if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`);
        const fields = Object.values(type.getFields())
          .filter((f) => getNamedType(f.type).name !== 'Entity')
          .map((f) => f.name);
        const spec = [...INTERFACE, ...TYPES[typeName]!].map(([field]) => field);
        expect(fields.sort(), typeName).toEqual(spec.sort());
        expect(type.getInterfaces().map((i) => i.name)).toEqual(['MusicBrainzEntity']);
      }
    });

    it('docs/ENTITY_TYPES.md has a row for every field with its JSON field', async () => {
      const doc = await readFile(new URL('../../../docs/ENTITY_TYPES.md', import.meta.url), 'utf8');
      for (const [typeName, spec] of Object.entries(TYPES)) {
        const section = doc.split(/^### /m).find((s) => s.startsWith(`\`${typeName}\``));
        expect(section, typeName).toBeDefined();
        for (const [field, path] of spec) {
          const json = path.split('|')[0]!;
          expect(section, `${typeName}.${field}`).toContain(`| \`${field}\` | \`${json}`);
        }
      }
      const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
      expect(readme).toContain('docs/ENTITY_TYPES.md');
    });

    it('inline fragments on the interface pick each type, across entity types in one list', async () => {
      const mbids = [TYPED.edSheeran, TYPED.abstractLogix, TYPED.place, TYPED.releaseGroup];
      const answer = await gql(
        run().app,
        `query($m: [ID!]!) { entities(mbids: $m) { current { __typename mbid name
         ... on Artist { sortName lifeSpan { begin ended } }
         ... on Label { labelCode country }
         ... on Place { coordinates { latitude longitude } }
         ... on ReleaseGroup { primaryType secondaryTypes } } } }`,
        { m: mbids },
      );
      expect(answer.errors).toBeUndefined();
      const lines = Object.values(packetOneLines())
        .flat()
        // biome-ignore lint/suspicious/noExplicitAny: JSON lines are walked field by field
        .map((l) => JSON.parse(l) as Record<string, any>);
      const json = (mbid: string) => lines.find((l) => l.id === mbid)!;
      const sheeran = json(TYPED.edSheeran);
      const logix = json(TYPED.abstractLogix);
      const place = json(TYPED.place);
      const group = json(TYPED.releaseGroup);
      expect(answer.data!.entities.map((e: { current: unknown }) => e.current)).toEqual([
        {
          __typename: 'Artist',
          mbid: TYPED.edSheeran,
          name: sheeran.name,
          sortName: sheeran['sort-name'],
          lifeSpan: { begin: sheeran['life-span'].begin, ended: sheeran['life-span'].ended },
        },
        { __typename: 'Label', mbid: TYPED.abstractLogix, name: logix.name, labelCode: null, country: null },
        { __typename: 'Place', mbid: TYPED.place, name: place.name, coordinates: place.coordinates },
        {
          __typename: 'ReleaseGroup',
          mbid: TYPED.releaseGroup,
          name: group.title,
          primaryType: group['primary-type'],
          secondaryTypes: group['secondary-types'],
        },
      ]);
    });

    it('Entity.current is the newest version typed; EntityChange.entity each version; data stays', async () => {
      const answer = await gql(
        run().app,
        `query($m: ID!) { entity(mbid: $m) {
         current { ... on Release { releaseGroupMbid status } }
         history { nodes { packet data entity { ... on Release { releaseGroupMbid status } } } } } }`,
        { m: TYPED.wishYouWereHere },
      );
      expect(answer.errors).toBeUndefined();
      const newest = JSON.parse(releaseWithGroup()) as { status: string; 'release-group': { id: string } };
      expect(answer.data!.entity.current).toEqual({
        releaseGroupMbid: newest['release-group'].id,
        status: newest.status,
      });
      const [first, second] = answer.data!.entity.history.nodes;
      expect(first.packet).toBe(1);
      expect(first.entity).toEqual({
        releaseGroupMbid: first.data['release-group'] ?? null,
        status: first.data.status,
      });
      expect(first.entity.releaseGroupMbid).toBeNull();
      expect(second.entity).toEqual(answer.data!.entity.current);
      expect(second.data).toEqual(newest);
    });

    it('parses each line once per request, however many typed fields and paths lead to it', async () => {
      const lines = packetOneLines().label;
      const parse = vi.spyOn(JSON, 'parse');
      try {
        const answer = await gql(
          run().app,
          `{ changes(packet: 1, entity: LABEL, first: 20) { nodes { name type entity { name disambiguation
             aliases { name } ... on Label { sortName labelCode lifeSpan { begin } } } } }
           entities(mbids: ["${TYPED.abstractLogix}"]) { latest { name entity { name } } current { name } } }`,
        );
        expect(answer.errors).toBeUndefined();
        const parsed = (line: string) => parse.mock.calls.filter(([text]) => text === line).length;
        // Also the line the changes page and the entities lookup both read.
        expect(lines.map(parsed)).toEqual(lines.map(() => 1));
      } finally {
        parse.mockRestore();
      }
    });

    it('Entity.current is null for an MBID no JSON dump held (known from a deletion)', async () => {
      const answer = await gql(
        run().app,
        `query($m: ID!) { entity(mbid: $m) { latest { packet } current { mbid } removed { kind } } }`,
        {
          m: TYPED.deletedOnly,
        },
      );
      expect(answer).toEqual({
        data: { entity: { latest: null, current: null, removed: { kind: 'DELETED' } } },
      });
    });

    it('a line whose id is in upper case is found under its lower-case MBID, its data as written', async () => {
      const query = `query($m: ID!) { entity(mbid: $m) { mbid current { mbid name } latest { data } } }`;
      for (const m of [TYPED.shoutedRecording, TYPED.shoutedRecording.toUpperCase()]) {
        const answer = await gql(run().app, query, { m });
        expect(answer).toEqual({
          data: {
            entity: {
              mbid: TYPED.shoutedRecording,
              current: { mbid: TYPED.shoutedRecording, name: 'Shouted id' },
              latest: { data: SHOUTED_RECORDING },
            },
          },
        });
      }
    });

    it('a JSON value of another type than upstream writes is a field error naming entity, line and path', async () => {
      const answer = await gql(
        run().app,
        `query($m: ID!) { entity(mbid: $m) { current { name ... on Recording { length isrcs } } } }`,
        { m: TYPED.badRecording },
      );
      expect(answer.data!.entity.current).toEqual({ name: 'Bad length', length: null, isrcs: [] });
      expect(answer.errors).toHaveLength(1);
      expect(answer.errors![0]!.extensions?.code).toBe('UNEXPECTED_JSON');
      expect(answer.errors![0]!.message).toContain(`recording ${TYPED.badRecording} (packet 4, line 1)`);
      expect(answer.errors![0]!.message).toContain('length is not an integer');
    });
  },
);
