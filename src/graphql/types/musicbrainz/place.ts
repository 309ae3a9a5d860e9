import { builder } from '../../builder.js';
import { entityObject, lifeSpanField, linkField, linkMbidField, textField, typeField } from './fields.js';
import { child, decimal, type JsonNode } from './json.js';

/** Coordinates of a place (`coordinates`). */
export const CoordinatesRef = builder.objectRef<JsonNode>('Coordinates').implement({
  description: 'WGS 84 coordinates in decimal degrees (JSON `coordinates`).',
  fields: (t) => ({
    latitude: t.float({
      nullable: true,
      description: 'JSON `latitude`.',
      resolve: (c) => decimal(c, 'latitude'),
    }),
    longitude: t.float({
      nullable: true,
      description: 'JSON `longitude`.',
      resolve: (c) => decimal(c, 'longitude'),
    }),
  }),
});

/** GraphQL `Place`: a place line typed (docs/ENTITY_TYPES.md, Place). */
export const PlaceRef = entityObject('place', 'A place (a JSON dump line of `place`), typed.', (t) => ({
  type: typeField(t, '`Venue`, `Studio`'),
  address: textField(t, 'address', 'as one line of text; often empty.'),
  coordinates: t.field({
    type: CoordinatesRef,
    nullable: true,
    description: 'JSON `coordinates`; null when unknown.',
    resolve: (e) => child(e, 'coordinates'),
  }),
  areaMbid: linkMbidField(t, ['area'], 'area'),
  area: linkField(t, ['area'], 'area'),
  lifeSpan: lifeSpanField(t),
}));
