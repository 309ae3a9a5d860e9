import { artistCreditField, entityObject, textField, textsField } from './fields.js';
import { flag, integer } from './json.js';

/** GraphQL `Recording`: a recording line typed (docs/ENTITY_TYPES.md, Recording). */
export const RecordingRef = entityObject(
  'recording',
  'A recording (a JSON dump line of `recording`), typed.',
  (t) => ({
    length: t.int({
      nullable: true,
      description: 'JSON `length`: duration in milliseconds; null when unknown.',
      resolve: (e) => integer(e, 'length'),
    }),
    video: t.boolean({ nullable: true, description: 'JSON `video`.', resolve: (e) => flag(e, 'video') }),
    isrcs: textsField(t, 'isrcs', 'ISRC codes.'),
    firstReleaseDate: textField(
      t,
      'first-release-date',
      'the earliest release date, `YYYY[-MM[-DD]]`; only in lines of newer dumps.',
    ),
    artistCredit: artistCreditField(t),
  }),
);
