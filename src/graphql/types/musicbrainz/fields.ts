import type { EntityType } from '../../../feed/entities.js';
import { builder, type Types } from '../../builder.js';
import { EntityRef } from '../entity.js';
import { ArtistCreditRef, LifeSpanRef, MusicBrainzEntityRef, TYPE_NAMES } from './common.js';
import { child, children, type JsonNode, linkedMbid, type TypedEntity, text, texts } from './json.js';
import { linkedEntity } from './links.js';

/** The field builder of an entity type's object (and of the small objects in it). */
export type FieldBuilder<T = TypedEntity> = PothosSchemaTypes.ObjectFieldBuilder<Types, T>;

/**
 * The object type of `entity` (name from {@link TYPE_NAMES}), implementing `MusicBrainzEntity`,
 * with `fields` besides the interface's.
 */
export function entityObject(
  entity: EntityType,
  description: string,
  fields: (t: FieldBuilder) => Record<string, PothosSchemaTypes.FieldRef<Types, unknown, 'Object'>>,
) {
  return builder.objectRef<TypedEntity>(TYPE_NAMES[entity]).implement({
    description,
    interfaces: [MusicBrainzEntityRef],
    isTypeOf: (value) => (value as TypedEntity).type === entity,
    fields,
  });
}

/** A nullable string field read from JSON `key`. */
export function textField<T extends JsonNode>(t: FieldBuilder<T>, key: string, about = '') {
  return t.string({
    nullable: true,
    description: `JSON \`${key}\`${about ? `: ${about}` : '.'}`,
    resolve: (node) => text(node, key),
  });
}

/** A nullable list of strings read from JSON `key` (null when the line has none, `[]` when empty). */
export function textsField<T extends JsonNode>(t: FieldBuilder<T>, key: string, about = '') {
  return t.stringList({
    nullable: true,
    description: `JSON \`${key}\`${about ? `: ${about}` : '.'}`,
    resolve: (node) => texts(node, key),
  });
}

/** `sortName` ← `sort-name`. */
export function sortNameField(t: FieldBuilder) {
  return textField(t, 'sort-name', 'the name for sorting, e.g. `Sheeran, Ed`.');
}

/** `type` ← `type`, the entity's own type (`Person`, `Venue`, ...), not its entity type. */
export function typeField(t: FieldBuilder, examples: string) {
  return textField(t, 'type', `this entity's type, e.g. ${examples}; null when not set.`);
}

/** `lifeSpan` ← `life-span`. */
export function lifeSpanField(t: FieldBuilder) {
  return t.field({
    type: LifeSpanRef,
    nullable: true,
    description: 'JSON `life-span`.',
    resolve: (e) => child(e, 'life-span'),
  });
}

/** `artistCredit` ← `artist-credit`. */
export function artistCreditField(t: FieldBuilder) {
  return t.field({
    type: [ArtistCreditRef],
    nullable: true,
    description: 'JSON `artist-credit`, in credit order; null when the line has none.',
    resolve: (e) => children(e, 'artist-credit'),
  });
}

/**
 * The MBID of the entity embedded at JSON `keys` (the first present), from the line itself, as
 * `<name>Mbid`; see {@link linkField} for the linked `Entity`.
 */
export function linkMbidField<T extends JsonNode>(t: FieldBuilder<T>, keys: string[], about: string) {
  return t.id({
    nullable: true,
    description: `JSON \`${keys[0]}.id\`: the ${about}, also when this instance does not hold it.`,
    resolve: (node) => linkedMbid(node, ...keys),
  });
}

/** The `Entity` embedded at JSON `keys` (the first present), from the current state; null when not held. */
export function linkField<T extends JsonNode>(t: FieldBuilder<T>, keys: string[], about: string) {
  return t.field({
    type: EntityRef,
    nullable: true,
    description: `The ${about} (JSON \`${keys[0]}.id\`) from the current state; null when this instance does not hold it.`,
    // Reads another stored line: a list of these counts by the references a line holds (cost.ts).
    extensions: { link: true },
    resolve: (node, _a, ctx) => linkedEntity(ctx, linkedMbid(node, ...keys)),
  });
}
