import { entityObject, lifeSpanField, sortNameField, textsField, typeField } from './fields.js';

/** GraphQL `Area`: an area line typed (docs/ENTITY_TYPES.md, Area). */
export const AreaRef = entityObject('area', 'An area (a JSON dump line of `area`), typed.', (t) => ({
  sortName: sortNameField(t),
  type: typeField(t, '`Country`, `City`'),
  iso31661Codes: textsField(t, 'iso-3166-1-codes', 'ISO 3166-1 country codes, e.g. `GB`; null when none.'),
  iso31662Codes: textsField(
    t,
    'iso-3166-2-codes',
    'ISO 3166-2 subdivision codes, e.g. `US-NC`; null when none.',
  ),
  iso31663Codes: textsField(t, 'iso-3166-3-codes', 'ISO 3166-3 codes of former countries; null when none.'),
  lifeSpan: lifeSpanField(t),
}));
