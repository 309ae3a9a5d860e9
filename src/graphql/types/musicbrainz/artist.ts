import {
  entityObject,
  lifeSpanField,
  linkField,
  linkMbidField,
  sortNameField,
  textField,
  textsField,
  typeField,
} from './fields.js';

/** GraphQL `Artist`: an artist line typed (docs/ENTITY_TYPES.md, Artist). */
export const ArtistRef = entityObject('artist', 'An artist (a JSON dump line of `artist`), typed.', (t) => ({
  sortName: sortNameField(t),
  type: typeField(t, '`Person`, `Group`, `Orchestra`'),
  gender: textField(t, 'gender', 'e.g. `Male`, `Female`, `Non-binary`; null when not set.'),
  country: textField(t, 'country', "ISO 3166-1 code of the artist's area, e.g. `GB`."),
  areaMbid: linkMbidField(t, ['area'], 'area'),
  area: linkField(t, ['area'], 'area'),
  // Older lines write `begin_area` / `end_area` (the sample lines hold both spellings).
  beginAreaMbid: linkMbidField(t, ['begin-area', 'begin_area'], 'begin area'),
  beginArea: linkField(t, ['begin-area', 'begin_area'], 'begin area'),
  endAreaMbid: linkMbidField(t, ['end-area', 'end_area'], 'end area'),
  endArea: linkField(t, ['end-area', 'end_area'], 'end area'),
  lifeSpan: lifeSpanField(t),
  ipis: textsField(t, 'ipis', 'IPI codes.'),
  isnis: textsField(t, 'isnis', 'ISNI codes.'),
}));
