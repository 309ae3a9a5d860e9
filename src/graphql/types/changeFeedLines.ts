import type { FieldNode, FragmentDefinitionNode } from 'graphql';
import { type FragmentMap, forEachField, type Visit } from '../plugins/selections.js';

/** `EntityChange` fields answered without the change's line: its key and its packet's TIMESTAMP. */
const LINE_FREE_FIELDS = new Set(['__typename', 'mbid', 'type', 'packet', 'position', 'timestamp']);

// Per connection field of a parsed document (Yoga caches documents, so the node is the same
// object on every request of the same query text).
const decided = new WeakMap<FieldNode, boolean>();

/**
 * True when the selection of a connection of changes (`changeFeed`, `changes`, `JsonDump.changes`,
 * `Entity.history`: `fieldNodes`, with the operation's `fragments`) may show a change's line: any
 * field of a node under `nodes` or `edges.node` other than {@link LINE_FREE_FIELDS}, fragments
 * followed, `EntityRemoval` fields excepted. When false, the page is read without its lines
 * (db/changeFeedQueries.ts `FeedQuery.lines`, `Reads.changesPage`, `Reads.changesOfMbidPage`).
 * Errs towards true: `@skip`/`@include` are not evaluated, and a line asked for after all is still
 * read, one seek each.
 */
export function selectsChangeLines(
  fieldNodes: readonly FieldNode[],
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
): boolean {
  const first = fieldNodes[0];
  const known = fieldNodes.length === 1 && first ? decided.get(first) : undefined;
  if (known !== undefined) return known;
  const lines = walk(fieldNodes, new Map(Object.entries(fragments)));
  if (fieldNodes.length === 1 && first) decided.set(first, lines);
  return lines;
}

function walk(fieldNodes: readonly FieldNode[], fragments: FragmentMap): boolean {
  let lines = false;
  const event: Visit = (field, typeCondition) => {
    if (typeCondition !== 'EntityRemoval' && !LINE_FREE_FIELDS.has(field.name.value)) lines = true;
  };
  const edge: Visit = (field, _typeCondition, path) => {
    if (field.name.value === 'node' && field.selectionSet)
      forEachField(field.selectionSet, fragments, event, path);
  };
  const connection: Visit = (field, _typeCondition, path) => {
    if (!field.selectionSet) return;
    if (field.name.value === 'nodes') forEachField(field.selectionSet, fragments, event, path);
    else if (field.name.value === 'edges') forEachField(field.selectionSet, fragments, edge, path);
  };
  for (const node of fieldNodes) {
    if (node.selectionSet) forEachField(node.selectionSet, fragments, connection);
  }
  return lines;
}
