/**
 * The eleven entity types that have incremental JSON dumps, in upstream spelling
 * (FEED.md, Deployments and URLs: `<ENTITY>`).
 */
export const ENTITY_TYPES = [
  'area',
  'artist',
  'event',
  'instrument',
  'label',
  'place',
  'recording',
  'release',
  'release-group',
  'series',
  'work',
] as const;

/** One entity type in upstream spelling, e.g. `release-group`. */
export type EntityType = (typeof ENTITY_TYPES)[number];

const ENTITY_SET: ReadonlySet<string> = new Set(ENTITY_TYPES);

/** True when `value` is one of the eleven upstream entity type names. */
export function isEntityType(value: string): value is EntityType {
  return ENTITY_SET.has(value);
}

/**
 * Parses a comma-separated list of entity types (`area,artist`).
 * @throws Error naming every unknown entry.
 */
export function parseEntityList(text: string): EntityType[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = items.filter((s) => !isEntityType(s));
  if (unknown.length > 0) {
    throw new Error(
      `unknown entity type(s): ${unknown.join(', ')} (expected some of: ${ENTITY_TYPES.join(', ')})`,
    );
  }
  return [...new Set(items)] as EntityType[];
}

/** GraphQL enum value for an entity type: `release-group` → `RELEASE_GROUP`. */
export function entityEnumName(entity: EntityType): string {
  return entity.toUpperCase().replace('-', '_');
}

/**
 * Entity type of a database table name without schema, as used in replication packets:
 * `release_group` → `release-group`; undefined when the table is not an entity table.
 */
export function entityOfTable(table: string): EntityType | undefined {
  const name = table.replace('_', '-');
  return isEntityType(name) ? name : undefined;
}
