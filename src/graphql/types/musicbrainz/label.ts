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
import { integer } from './json.js';

/** GraphQL `Label`: a label line typed (docs/ENTITY_TYPES.md, Label). */
export const LabelRef = entityObject('label', 'A label (a JSON dump line of `label`), typed.', (t) => ({
  sortName: sortNameField(t),
  type: typeField(t, '`Original Production`, `Imprint`'),
  labelCode: t.int({
    nullable: true,
    description: 'JSON `label-code`: the LC number without `LC`, e.g. 542.',
    resolve: (e) => integer(e, 'label-code'),
  }),
  country: textField(t, 'country', "ISO 3166-1 code of the label's area."),
  areaMbid: linkMbidField(t, ['area'], 'area'),
  area: linkField(t, ['area'], 'area'),
  lifeSpan: lifeSpanField(t),
  ipis: textsField(t, 'ipis', 'IPI codes.'),
  isnis: textsField(t, 'isnis', 'ISNI codes.'),
}));
