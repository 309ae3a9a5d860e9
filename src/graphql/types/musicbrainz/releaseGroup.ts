import { artistCreditField, entityObject, textField, textsField } from './fields.js';

/** GraphQL `ReleaseGroup`: a release group line typed (docs/ENTITY_TYPES.md, ReleaseGroup). */
export const ReleaseGroupRef = entityObject(
  'release-group',
  'A release group (a JSON dump line of `release-group`), typed.',
  (t) => ({
    primaryType: textField(t, 'primary-type', 'e.g. `Album`, `Single`; null when not set.'),
    secondaryTypes: textsField(t, 'secondary-types', 'e.g. `Compilation`, `Live`.'),
    firstReleaseDate: textField(
      t,
      'first-release-date',
      'the earliest release date, `YYYY[-MM[-DD]]`; empty when unknown.',
    ),
    artistCredit: artistCreditField(t),
  }),
);
