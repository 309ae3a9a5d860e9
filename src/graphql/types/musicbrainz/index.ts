import { builder } from '../../builder.js';
import { EntityRef } from '../entity.js';
import { EntityChangeRef } from '../entityChange.js';
import { MusicBrainzEntityRef } from './common.js';
import { typedEntityOf } from './json.js';
import './area.js';
import './artist.js';
import './event.js';
import './instrument.js';
import './label.js';
import './place.js';
import './recording.js';
import './release.js';
import './releaseGroup.js';
import './series.js';
import './work.js';

/**
 * Typed entities (issue 15): the `MusicBrainzEntity` interface, one object type per entity type,
 * and the two fields that lead to them, `Entity.current` and `EntityChange.entity`.
 */

builder.objectField(EntityRef, 'current', (t) =>
  t.field({
    type: MusicBrainzEntityRef,
    nullable: true,
    description:
      'The newest version (`latest`), typed: `... on Artist { sortName }`; null when no JSON dump held this MBID.',
    // Read from one stored line: its selection costs at most the line's, and its links (cost.ts).
    extensions: { lineBound: true },
    resolve: (e, _a, ctx) => (e.latest ? typedEntityOf(e.latest, ctx) : null),
  }),
);

builder.objectField(EntityChangeRef, 'entity', (t) =>
  t.field({
    type: MusicBrainzEntityRef,
    description:
      'This version, typed: `... on Release { status media { format } }`. `type` is its entity type.',
    extensions: { lineBound: true },
    resolve: (c, _a, ctx) => typedEntityOf(c, ctx),
  }),
);
