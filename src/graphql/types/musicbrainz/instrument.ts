import { entityObject, textField, typeField } from './fields.js';

/** GraphQL `Instrument`: an instrument line typed (docs/ENTITY_TYPES.md, Instrument). */
export const InstrumentRef = entityObject(
  'instrument',
  'An instrument (a JSON dump line of `instrument`), typed.',
  (t) => ({
    type: typeField(t, '`Wind instrument`, `String instrument`'),
    description: textField(t, 'description', 'a short description; often empty.'),
  }),
);
