import { ENTITY_TYPES, type EntityType, entityEnumName } from '../../feed/entities.js';
import { builder } from '../builder.js';

/** GraphQL `EntityType`: internal values are upstream spellings (`release-group`). */
export const EntityTypeEnum = builder.enumType('EntityType', {
  description: 'The entity types that have incremental JSON dumps.',
  values: Object.fromEntries(
    ENTITY_TYPES.map((entity) => [
      entityEnumName(entity),
      { value: entity, description: `\`${entity}\` in feed file names` },
    ]),
  ) as Record<string, { value: EntityType }>,
});
