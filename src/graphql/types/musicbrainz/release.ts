import { builder } from '../../builder.js';
import { artistCreditField, entityObject, linkField, linkMbidField, textField } from './fields.js';
import { children, integer, type JsonNode, text } from './json.js';

/** A medium of a release (`media[]`). */
export const MediumRef = builder.objectRef<JsonNode>('Medium').implement({
  description: 'A medium of a release (JSON `media[]`): a CD, a side of vinyl, a digital medium.',
  fields: (t) => ({
    position: t.int({
      nullable: true,
      description: 'JSON `position`: 1-based.',
      resolve: (m) => integer(m, 'position'),
    }),
    format: t.string({
      nullable: true,
      description: 'JSON `format`, e.g. `CD`, `Digital Media`; null when unknown.',
      resolve: (m) => text(m, 'format'),
    }),
    trackCount: t.int({
      nullable: true,
      description: 'JSON `track-count`.',
      resolve: (m) => integer(m, 'track-count'),
    }),
    title: t.string({
      nullable: true,
      description: 'JSON `title`; often empty.',
      resolve: (m) => text(m, 'title'),
    }),
  }),
});

/** A label and catalog number of a release (`label-info[]`). */
export const LabelInfoRef = builder.objectRef<JsonNode>('LabelInfo').implement({
  description: 'A label and catalog number of a release (JSON `label-info[]`).',
  fields: (t) => ({
    catalogNumber: t.string({
      nullable: true,
      description: 'JSON `catalog-number`.',
      resolve: (l) => text(l, 'catalog-number'),
    }),
    labelMbid: linkMbidField(t, ['label'], 'label'),
    label: linkField(t, ['label'], 'label'),
  }),
});

/** GraphQL `Release`: a release line typed (docs/ENTITY_TYPES.md, Release). */
export const ReleaseRef = entityObject(
  'release',
  'A release (a JSON dump line of `release`), typed.',
  (t) => ({
    status: textField(t, 'status', 'e.g. `Official`, `Promotion`, `Bootleg`; null when not set.'),
    date: textField(t, 'date', 'release date, `YYYY[-MM[-DD]]`; empty when unknown.'),
    country: textField(t, 'country', 'ISO 3166-1 code of the release country (`XE` Europe, `XW` worldwide).'),
    barcode: textField(t, 'barcode', 'null when not entered, empty when the release has none.'),
    packaging: textField(t, 'packaging', 'e.g. `Jewel Case`; null when not set.'),
    asin: textField(t, 'asin', 'Amazon ASIN.'),
    releaseGroupMbid: linkMbidField(t, ['release-group'], 'release group'),
    releaseGroup: linkField(t, ['release-group'], 'release group'),
    artistCredit: artistCreditField(t),
    labelInfo: t.field({
      type: [LabelInfoRef],
      nullable: true,
      description: 'JSON `label-info`; null when the line has none.',
      resolve: (e) => children(e, 'label-info'),
    }),
    media: t.field({
      type: [MediumRef],
      nullable: true,
      description: 'JSON `media`, in order; null when the line has none.',
      resolve: (e) => children(e, 'media'),
    }),
  }),
);
