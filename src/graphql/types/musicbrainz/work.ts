import { entityObject, textField, textsField, typeField } from './fields.js';

/** GraphQL `Work`: a work line typed (docs/ENTITY_TYPES.md, Work). */
export const WorkRef = entityObject('work', 'A work (a JSON dump line of `work`), typed.', (t) => ({
  type: typeField(t, '`Song`, `Symphony`'),
  language: textField(t, 'language', 'ISO 639-3 code of the lyrics, e.g. `eng` (`mul` for several).'),
  languages: textsField(t, 'languages', 'ISO 639-3 codes of the lyrics.'),
  iswcs: textsField(t, 'iswcs', 'ISWC codes.'),
}));
