import { GraphQLError } from 'graphql';
import type { ChangeRow } from '../../../db/queries.js';
import type { EntityType } from '../../../feed/entities.js';

/**
 * Reading typed fields out of a stored JSON dump line (docs/ENTITY_TYPES.md has the mapping). A
 * line is parsed once per request however many fields, and however many paths to it, it asks for. A field the line does not hold,
 * or holds as `null`, is null; a value of another JSON type than upstream writes is a field error
 * (code `UNEXPECTED_JSON`) naming the entity, packet, line and JSON path, never a guess.
 */

/** A JSON object of a line, or an object nested in one. */
export type JsonObject = Record<string, unknown>;

/** A JSON object and where it sits, for errors: `at` the line, `path` the JSON path in it (`aliases[2]`). */
export interface JsonNode {
  json: JsonObject;
  /** `artist <MBID> (packet N, line P)` */
  at: string;
  /** JSON path of the object in the line, `''` for the line itself. */
  path: string;
}

/** A typed entity: one JSON dump line of `type`, parsed. */
export interface TypedEntity extends JsonNode {
  mbid: string;
  type: EntityType;
}

// Per request (its context object), by change id: two rows of one line (a page of changes and an
// entity lookup in the same request) share one parse.
const typed = new WeakMap<object, Map<number, TypedEntity>>();

/**
 * The typed entity of a stored change, parsed once per request (`request` is the GraphQL context).
 * @throws GraphQLError UNEXPECTED_JSON when the line is not a JSON object (the ingest stores none such).
 */
export function typedEntityOf(change: ChangeRow, request: object): TypedEntity {
  let parsed = typed.get(request);
  if (!parsed) {
    parsed = new Map();
    typed.set(request, parsed);
  }
  let entity = parsed.get(change.id);
  if (!entity) {
    const at = `${change.entity} ${change.mbid} (packet ${change.packet}, line ${change.position})`;
    const json: unknown = JSON.parse(change.data.toString('utf8'));
    if (!isObject(json)) throw unexpected({ at, path: '' }, 'the line', 'an object');
    entity = { json, at, path: '', mbid: change.mbid, type: change.entity };
    parsed.set(change.id, entity);
  }
  return entity;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pathOf(node: Pick<JsonNode, 'path'>, key: string): string {
  return node.path ? `${node.path}.${key}` : key;
}

function unexpected(node: Pick<JsonNode, 'at' | 'path'>, key: string, wanted: string): GraphQLError {
  const path = pathOf(node, key);
  return new GraphQLError(`${node.at}: ${path} is not ${wanted} as upstream writes it`, {
    extensions: { code: 'UNEXPECTED_JSON', at: node.at, path },
  });
}

/** The first of `keys` the object holds with a non-null value, or null when none does. */
function presentValue(node: JsonNode, keys: readonly string[]): { key: string; value: unknown } | null {
  for (const key of keys) {
    const value = node.json[key];
    if (value !== undefined && value !== null) return { key, value };
  }
  return null;
}

/**
 * `node.json[key]` (the first of `keys` present) as a string; null when absent or null.
 * @throws GraphQLError UNEXPECTED_JSON for another JSON type.
 */
export function text(node: JsonNode, ...keys: string[]): string | null {
  const found = presentValue(node, keys);
  if (!found) return null;
  if (typeof found.value !== 'string') throw unexpected(node, found.key, 'a string');
  return found.value;
}

/** GraphQL's `Int` is 32-bit signed: a larger value would fail in the serializer, without a code. */
const INT_MAX = 2 ** 31 - 1;

/** As {@link text}, for an integer that fits GraphQL's `Int` (32-bit signed). */
export function integer(node: JsonNode, key: string): number | null {
  const found = presentValue(node, [key]);
  if (!found) return null;
  const { value } = found;
  if (!Number.isInteger(value)) throw unexpected(node, key, 'an integer');
  if ((value as number) > INT_MAX || (value as number) < -INT_MAX - 1)
    throw unexpected(node, key, `an integer of 32 bits (it is ${value})`);
  return value as number;
}

/** As {@link text}, for a number (upstream writes coordinates as numbers). */
export function decimal(node: JsonNode, key: string): number | null {
  const found = presentValue(node, [key]);
  if (!found) return null;
  if (typeof found.value !== 'number') throw unexpected(node, key, 'a number');
  return found.value;
}

/** As {@link text}, for a boolean. */
export function flag(node: JsonNode, key: string): boolean | null {
  const found = presentValue(node, [key]);
  if (!found) return null;
  if (typeof found.value !== 'boolean') throw unexpected(node, key, 'a boolean');
  return found.value;
}

/** As {@link text}, for an array of strings. */
export function texts(node: JsonNode, key: string): string[] | null {
  const found = presentValue(node, [key]);
  if (!found) return null;
  const { value } = found;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw unexpected(node, key, 'an array of strings');
  }
  return value as string[];
}

/** As {@link text}, for a nested object (the first of `keys` present). */
export function child(node: JsonNode, ...keys: string[]): JsonNode | null {
  const found = presentValue(node, keys);
  if (!found) return null;
  if (!isObject(found.value)) throw unexpected(node, found.key, 'an object');
  return { json: found.value, at: node.at, path: pathOf(node, found.key) };
}

/** As {@link text}, for an array of objects; each item knows its index for errors. */
export function children(node: JsonNode, key: string): JsonNode[] | null {
  const found = presentValue(node, [key]);
  if (!found) return null;
  const { value } = found;
  if (!Array.isArray(value)) throw unexpected(node, key, 'an array');
  return value.map((item, i) => {
    if (!isObject(item)) throw unexpected(node, `${key}[${i}]`, 'an object');
    return { json: item, at: node.at, path: pathOf(node, `${key}[${i}]`) };
  });
}

/** The lower-case MBID (`id`) of the nested object at `keys`; null when the line has none there. */
export function linkedMbid(node: JsonNode, ...keys: string[]): string | null {
  const linked = child(node, ...keys);
  return linked ? (text(linked, 'id')?.toLowerCase() ?? null) : null;
}
