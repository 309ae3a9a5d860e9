import { entityObject, lifeSpanField, textField, typeField } from './fields.js';
import { flag } from './json.js';

/** GraphQL `Event`: an event line typed (docs/ENTITY_TYPES.md, Event). */
export const EventRef = entityObject('event', 'An event (a JSON dump line of `event`), typed.', (t) => ({
  type: typeField(t, '`Concert`, `Festival`'),
  time: textField(t, 'time', 'start time, `HH:MM`; upstream writes an empty string when unknown.'),
  setlist: textField(t, 'setlist', 'the setlist in its wiki-like markup; often empty.'),
  cancelled: t.boolean({
    nullable: true,
    description: 'JSON `cancelled`.',
    resolve: (e) => flag(e, 'cancelled'),
  }),
  lifeSpan: lifeSpanField(t),
}));
