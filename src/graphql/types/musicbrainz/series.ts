import { entityObject, typeField } from './fields.js';

/** GraphQL `Series`: a series line typed (docs/ENTITY_TYPES.md, Series). */
export const SeriesRef = entityObject('series', 'A series (a JSON dump line of `series`), typed.', (t) => ({
  type: typeField(t, '`Release group series`, `Tour`'),
}));
