import { describe, expect, it } from 'vitest';
import { ENTITY_ROW_TABLES_SQL } from '../../src/db/schema.js';
import { ENTITY_TABLES } from '../../src/sync/replicationRemovals.js';

// Storing a replication packet is tested on both stores in test/sync/stores/replication*.test.ts.
describe('the entity tables of replication packets', () => {
  it('indexes exactly the eleven entity tables', () => {
    const listed = [...ENTITY_ROW_TABLES_SQL.matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(listed).toEqual(ENTITY_TABLES);
    expect(ENTITY_TABLES).toContain('musicbrainz.release_group');
  });
});
