/**
 * The typed entity mapping as the tests read it: per GraphQL type, each field and the JSON path it
 * comes from (docs/ENTITY_TYPES.md is the user's copy; a test checks they agree). A path segment
 * may name alternatives (`begin-area|begin_area`: the first present). Link fields (`Entity`) are
 * not listed: their `...Mbid` twins are, and the link tests check the resolved entities.
 */

/** `[GraphQL field, JSON path, nested spec for an object or a list of objects]`. */
export type Spec = readonly (readonly [string, string, Spec?])[];

const ALIAS: Spec = [
  ['name', 'name'],
  ['sortName', 'sort-name'],
  ['locale', 'locale'],
  ['primary', 'primary'],
  ['type', 'type'],
];
const TAG: Spec = [
  ['name', 'name'],
  ['count', 'count'],
];
const LIFE_SPAN: Spec = [
  ['begin', 'begin'],
  ['end', 'end'],
  ['ended', 'ended'],
];
const ARTIST_CREDIT: Spec = [
  ['name', 'name'],
  ['joinPhrase', 'joinphrase'],
  ['artistMbid', 'artist.id'],
  ['artistName', 'artist.name'],
];

/** The fields of `MusicBrainzEntity`. */
export const INTERFACE: Spec = [
  ['mbid', 'id'],
  ['name', 'title|name'],
  ['disambiguation', 'disambiguation'],
  ['aliases', 'aliases', ALIAS],
  ['tags', 'tags', TAG],
];

/** The fields of each object type besides the interface's. */
export const TYPES: Record<string, Spec> = {
  Area: [
    ['sortName', 'sort-name'],
    ['type', 'type'],
    ['iso31661Codes', 'iso-3166-1-codes'],
    ['iso31662Codes', 'iso-3166-2-codes'],
    ['iso31663Codes', 'iso-3166-3-codes'],
    ['lifeSpan', 'life-span', LIFE_SPAN],
  ],
  Artist: [
    ['sortName', 'sort-name'],
    ['type', 'type'],
    ['gender', 'gender'],
    ['country', 'country'],
    ['areaMbid', 'area.id'],
    ['beginAreaMbid', 'begin-area|begin_area.id'],
    ['endAreaMbid', 'end-area|end_area.id'],
    ['lifeSpan', 'life-span', LIFE_SPAN],
    ['ipis', 'ipis'],
    ['isnis', 'isnis'],
  ],
  Event: [
    ['type', 'type'],
    ['time', 'time'],
    ['setlist', 'setlist'],
    ['cancelled', 'cancelled'],
    ['lifeSpan', 'life-span', LIFE_SPAN],
  ],
  Instrument: [
    ['type', 'type'],
    ['description', 'description'],
  ],
  Label: [
    ['sortName', 'sort-name'],
    ['type', 'type'],
    ['labelCode', 'label-code'],
    ['country', 'country'],
    ['areaMbid', 'area.id'],
    ['lifeSpan', 'life-span', LIFE_SPAN],
    ['ipis', 'ipis'],
    ['isnis', 'isnis'],
  ],
  Place: [
    ['type', 'type'],
    ['address', 'address'],
    [
      'coordinates',
      'coordinates',
      [
        ['latitude', 'latitude'],
        ['longitude', 'longitude'],
      ],
    ],
    ['areaMbid', 'area.id'],
    ['lifeSpan', 'life-span', LIFE_SPAN],
  ],
  Recording: [
    ['length', 'length'],
    ['video', 'video'],
    ['isrcs', 'isrcs'],
    ['firstReleaseDate', 'first-release-date'],
    ['artistCredit', 'artist-credit', ARTIST_CREDIT],
  ],
  Release: [
    ['status', 'status'],
    ['date', 'date'],
    ['country', 'country'],
    ['barcode', 'barcode'],
    ['packaging', 'packaging'],
    ['asin', 'asin'],
    ['releaseGroupMbid', 'release-group.id'],
    ['artistCredit', 'artist-credit', ARTIST_CREDIT],
    [
      'labelInfo',
      'label-info',
      [
        ['catalogNumber', 'catalog-number'],
        ['labelMbid', 'label.id'],
      ],
    ],
    [
      'media',
      'media',
      [
        ['position', 'position'],
        ['format', 'format'],
        ['trackCount', 'track-count'],
        ['title', 'title'],
      ],
    ],
  ],
  ReleaseGroup: [
    ['primaryType', 'primary-type'],
    ['secondaryTypes', 'secondary-types'],
    ['firstReleaseDate', 'first-release-date'],
    ['artistCredit', 'artist-credit', ARTIST_CREDIT],
  ],
  Series: [['type', 'type']],
  Work: [
    ['type', 'type'],
    ['language', 'language'],
    ['languages', 'languages'],
    ['iswcs', 'iswcs'],
  ],
};

/** The selection set of `spec` (`a b { c d }`). */
export function selection(spec: Spec): string {
  return spec.map(([field, , inner]) => (inner ? `${field} { ${selection(inner)} }` : field)).join(' ');
}

function read(json: unknown, path: string): unknown {
  let value = json;
  for (const segment of path.split('.')) {
    if (typeof value !== 'object' || value === null) return null;
    const object = value as Record<string, unknown>;
    const key = segment.split('|').find((k) => object[k] !== undefined && object[k] !== null);
    value = key === undefined ? null : object[key];
  }
  return value ?? null;
}

/** What the API must answer for `spec` over the JSON object `json`: its values, null where absent. */
export function expectedOf(json: unknown, spec: Spec): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [field, path, inner] of spec) {
    const value = read(json, path);
    if (!inner || value === null) answer[field] = value;
    else
      answer[field] = Array.isArray(value)
        ? value.map((item) => expectedOf(item, inner))
        : expectedOf(value, inner);
  }
  return answer;
}
