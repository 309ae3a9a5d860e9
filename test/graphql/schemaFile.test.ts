import { readFileSync } from 'node:fs';
import { type ASTNode, parse, print, visit } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printSchemaFile, SCHEMA_FILE } from '../../src/graphql/print.js';

/** The SDL without descriptions, so that every field with its arguments prints on one line. */
function withoutDescriptions(sdl: string): string {
  return print(
    visit(parse(sdl), {
      enter: (node: ASTNode) =>
        'description' in node && node.description ? { ...node, description: undefined } : undefined,
    }),
  );
}

describe('schema.graphql', () => {
  it('is the printed Pothos schema (run `npm run schema:print` after changing GraphQL types)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printSchemaFile());
  });

  it('keeps the contract names other tools rely on', () => {
    const sdl = withoutDescriptions(printSchemaFile());
    for (const name of [
      'latestPacket: Packet',
      'packet(number: Int!): Packet',
      'changes(after: String, entity: EntityType!, first: Int, packet: Int!): EntityChangeConnection!',
      'entity(mbid: ID!): Entity',
      'enum DumpStatus',
      'enum EntityType',
      // Replication packets (issue 3).
      'replication: ReplicationPacket\n',
      'format: ReplicationFormat!',
      'replicationSequence: Int!',
      'schemaSequence: Int!',
      'rowCount: Int!',
      'tables: [TableChanges!]!',
      'file: FeedFile',
      'type TableChanges {\n  deletes: Int!\n  inserts: Int!\n  table: String!\n  updates: Int!\n}',
      'rowChanges(after: String, first: Int, op: RowOperation, packet: Int!, table: String): RowChangeConnection!',
      'enum RowOperation {\n  DELETE\n  INSERT\n  UPDATE\n}',
      'op: RowOperation!',
      'keys: JSON\n',
      'oldData: JSON\n',
      'newData: JSON\n',
      'removals(after: String, entity: EntityType, first: Int, fromPacket: Int, toPacket: Int): EntityRemovalConnection!',
      'enum RemovalKind {\n  DELETED\n  MERGED\n}',
      'enum ReplicationFormat {\n  V1\n  V2\n}',
      'kind: RemovalKind!',
      'mergedInto: ID\n',
      'removed: EntityRemoval\n',
      'latest: EntityChange',
      'redirect: Entity',
    ]) {
      expect(sdl).toContain(name);
    }
  });
});
