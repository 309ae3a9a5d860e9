import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSchemaFile, SCHEMA_FILE } from '../../src/graphql/print.js';

describe('schema.graphql', () => {
  it('is the printed Pothos schema (run `npm run schema:print` after changing GraphQL types)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printSchemaFile());
  });

  it('keeps the contract names other tools rely on', () => {
    const sdl = printSchemaFile();
    for (const name of [
      'latestPacket: Packet',
      'packet(number: Int!): Packet',
      'changes(after: String, entity: EntityType!, first: Int, packet: Int!): EntityChangeConnection!',
      'entity(mbid: ID!): Entity',
      'enum DumpStatus',
      'enum EntityType',
    ]) {
      expect(sdl).toContain(name);
    }
  });
});
