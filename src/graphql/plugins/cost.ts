import {
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isAbstractType,
  isEnumType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../connection.js';
import { operationWalk, type Walk } from './operationWalk.js';
import { type FragmentMap, forEachField } from './selections.js';

/**
 * The estimated cost of an operation (issue 5, hostile queries; issue 16: every list counted by
 * what it can really return), checked against `maxCost` before execution (hardening.ts). A unit of
 * cost stands for at most about 200 bytes of answer: a field costs 1, a table row's JSON
 * {@link ROW_COST}, a stored line {@link LINE_COST}, each times the items of the lists above it. The
 * rules follow the schema, never a field name, so new fields are counted as they are added:
 *
 * - a field with a `first` argument (a connection) returns `first` items (default 20, at most 500);
 *   its `edges` and `nodes` are that page, not another list;
 * - a list field with a list argument (`entities(mbids:)`) returns one item per element given;
 * - a list of an enum returns at most every value of the enum;
 * - a list field may declare its bound: `extensions: { maxItems: N }` (`Packet.dumps`: 11);
 * - any other list counts {@link DEFAULT_LIST_SIZE} items (lists read from one stored line, whose
 *   bytes the line bounds); the fields of its items that link to another stored line
 *   (`extensions: { link: true }`: `ArtistCredit.artist`, `LabelInfo.label`), whose answers that
 *   line does not bound, count {@link LINKED_LIST_SIZE} times, as many references as a line holds;
 * - a field of the `JSON` scalar costs {@link ROW_COST}; a field may declare its own cost,
 *   `extensions: { cost: N }`, as those holding a whole stored line do (`EntityChange.data`,
 *   `QuarantinedLine.raw`: {@link LINE_COST}), so any field returning them is counted alike;
 * - a field whose answer is the typed view of one stored line (`extensions: { lineBound: true }`:
 *   `Entity.current`, `EntityChange.entity`) costs at most {@link LINE_COST} for its selection, plus
 *   what its links cost: the line bounds every field read from it;
 * - a field computed from stored lines may declare the cost of its whole answer, children and list
 *   included, `extensions: { totalCost: N }` (`EntityChange.diff`: a patch between two versions is
 *   no longer than a line, {@link LINE_COST});
 * - under a union or an interface, each value is of one object type: the selection costs what it
 *   costs for the dearest of those types (`... on EntityChange` and `... on EntityRemoval` of a
 *   `FeedEvent` are not both paid), not the sum of every type's fragment;
 * - a variable counts with the value the request gives it, else its default in the operation, as
 *   execution will use it.
 *
 * So the largest answer within the default limit of 50,000 is about 10 MB, reached by stored lines
 * (README, Hardening; test/graphql/plugins/answerSize.test.ts builds it).
 */

/** Items a list without a known bound is assumed to return. */
export const DEFAULT_LIST_SIZE = 20;

/**
 * Items a list read from one stored line is assumed to return when each item links to another
 * stored line: as many references as a line of 12 KiB (the largest size assumed, {@link LINE_COST})
 * can hold. The artist credits of the sample lines take 234–2,289 bytes each; the shortest a real
 * one can be, with the members every one has (the artist's MBID, name, sort name, disambiguation,
 * type and aliases), takes about 150, so at most about 80 fit (test/graphql/plugins/answerSizeLinks.test.ts).
 */
export const LINKED_LIST_SIZE = 100;

/**
 * Cost of one stored JSON dump line (`EntityChange.data`): at the default limit of 50,000 at most
 * 50,000 / (64 + 2) = 757 lines fit in one answer, 9.3 MB of lines of 12 KiB (the largest line size
 * assumed; real lines are 3–7 KB), while one page of 500 lines (cost 33,000) still passes.
 */
export const LINE_COST = 64;

/** Cost of a JSON value that is not a whole line: a table row of a replication packet (up to 1.6 KB assumed). */
export const ROW_COST = 8;

function argumentValue(value: ValueNode, variables: Record<string, unknown>): unknown {
  if (value.kind === Kind.VARIABLE) return variables[value.name.value];
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.LIST) return value.values;
  return undefined;
}

function argument(field: FieldNode, name: string, variables: Record<string, unknown>): unknown {
  const node = field.arguments?.find((a) => a.name.value === name);
  return node ? argumentValue(node.value, variables) : undefined;
}

/** The longest list given to one of the list arguments of `field`, or undefined when none is. */
function listArgumentLength(
  definition: GraphQLField<unknown, unknown>,
  field: FieldNode,
  variables: Record<string, unknown>,
): number | undefined {
  let longest: number | undefined;
  for (const arg of definition.args) {
    if (!isListType(getNullableType(arg.type))) continue;
    const value = argument(field, arg.name, variables);
    if (Array.isArray(value)) longest = Math.max(longest ?? 0, value.length);
  }
  return longest;
}

/**
 * How many times the children of `field` run: its page size, a list's bound, or 1; `fromLine` when
 * it is the assumed size of a list read from one stored line ({@link DEFAULT_LIST_SIZE}).
 */
function multiplier(
  parent: GraphQLNamedType,
  definition: GraphQLField<unknown, unknown>,
  field: FieldNode,
  variables: Record<string, unknown>,
): { items: number; fromLine?: true } {
  if (definition.args.some((a) => a.name === 'first')) {
    const first = argument(field, 'first', variables);
    // Beyond the maximum the resolver refuses with PAGE_SIZE_EXCEEDED; it costs no more than that.
    return {
      items: Math.min(Math.max(typeof first === 'number' ? first : DEFAULT_PAGE_SIZE, 0), MAX_PAGE_SIZE),
    };
  }
  if (!isListType(getNullableType(definition.type))) return { items: 1 };
  // A connection's `edges` and `nodes` are the page its field's `first` already counted.
  if (parent.name.endsWith('Connection')) return { items: 1 };
  const declared = definition.extensions?.maxItems;
  if (typeof declared === 'number') return { items: declared };
  const given = listArgumentLength(definition, field, variables);
  if (given !== undefined) return { items: given };
  const item = getNamedType(definition.type);
  if (isEnumType(item)) return { items: item.getValues().length };
  return { items: DEFAULT_LIST_SIZE, fromLine: true };
}

/** Cost of one value of `definition` itself (its children not counted). */
function fieldCost(definition: GraphQLField<unknown, unknown>): number {
  const declared = definition.extensions?.cost;
  if (typeof declared === 'number') return declared;
  return getNamedType(definition.type).name === 'JSON' ? ROW_COST : 1;
}

/**
 * The cost of `selectionSet` on `parent`; with `linksOnly`, only of the fields below it that link
 * to another stored line (`extensions: { link: true }`), their selections included: the part of an
 * answer read from one stored line that the line's bytes do not bound.
 */
function selectionCost(
  walk: Walk,
  parent: GraphQLNamedType,
  selectionSet: SelectionSetNode,
  path?: Set<string>,
  linksOnly = false,
): number {
  const { schema } = walk;
  // Cost of each selected field, by the type condition it sits under (undefined: none).
  const costs: [condition: string | undefined, cost: number][] = [];
  forEachField(
    selectionSet,
    walk.fragments,
    (field, typeCondition, inner) => {
      if (field.name.value.startsWith('__')) return;
      const owner = (typeCondition && schema.getType(typeCondition)) || parent;
      if (!isObjectType(owner) && !isInterfaceType(owner)) return;
      const definition = owner.getFields()[field.name.value];
      if (!definition) return;
      costs.push([typeCondition, fieldSelectionCost(walk, owner, definition, field, inner, linksOnly)]);
    },
    path,
  );
  if (!isAbstractType(parent)) return costs.reduce((sum, [, cost]) => sum + cost, 0);
  // A value is of one possible type: the fields that apply to it, for the dearest type.
  const applies = (condition: string | undefined, type: GraphQLNamedType) => {
    if (condition === undefined || condition === type.name) return true;
    const named = schema.getType(condition);
    return !!named && isAbstractType(named) && isObjectType(type) && schema.isSubType(named, type);
  };
  let dearest = 0;
  for (const type of schema.getPossibleTypes(parent)) {
    let sum = 0;
    for (const [condition, cost] of costs) if (applies(condition, type)) sum += cost;
    dearest = Math.max(dearest, sum);
  }
  return dearest;
}

/** The cost of one selected field with its selection (see {@link selectionCost}). */
function fieldSelectionCost(
  walk: Walk,
  owner: GraphQLNamedType,
  definition: GraphQLField<unknown, unknown>,
  field: FieldNode,
  inner: Set<string>,
  linksOnly: boolean,
): number {
  const below = (only: boolean) =>
    field.selectionSet
      ? selectionCost(walk, getNamedType(definition.type), field.selectionSet, inner, only)
      : 0;
  const { items, fromLine } = multiplier(owner, definition, field, walk.variables);
  // A list read from a line holds at most as many references to other lines as a line can.
  if (linksOnly && definition.extensions?.link !== true)
    return (fromLine ? LINKED_LIST_SIZE : items) * below(true);
  const whole = definition.extensions?.totalCost;
  if (typeof whole === 'number') return whole;
  let children = below(false);
  // The typed view of one stored line answers no more than the line for each time a selection
  // repeats a field under another name, but for its links.
  if (definition.extensions?.lineBound === true && field.selectionSet)
    children = Math.min(
      children,
      LINE_COST * repeatsOf(field.selectionSet, walk.fragments, inner) + below(true),
    );
  const cost = items * (fieldCost(definition) + children);
  return fromLine ? cost + (LINKED_LIST_SIZE - items) * below(true) : cost;
}

/**
 * How many times an answer to `selectionSet` may hold one value: a field selected under several
 * response names (aliases) answers once for each, and so does every field below it.
 */
function repeatsOf(selectionSet: SelectionSetNode, fragments: FragmentMap, path: Set<string>): number {
  const names = new Map<string, Set<string>>();
  const below = new Map<string, number>();
  forEachField(
    selectionSet,
    fragments,
    (field, _condition, inner) => {
      const name = field.name.value;
      names.set(name, (names.get(name) ?? new Set()).add(field.alias?.value ?? name));
      if (field.selectionSet)
        below.set(name, Math.max(below.get(name) ?? 1, repeatsOf(field.selectionSet, fragments, inner)));
    },
    path,
  );
  let most = 1;
  for (const [name, keys] of names) most = Math.max(most, keys.size * (below.get(name) ?? 1));
  return most;
}

/**
 * Estimated cost of the operation `operationName` (or the only one) of `document` (see the module
 * comment): roughly the number of field values the answer holds, a stored line counting
 * {@link LINE_COST}. Returns 0 when the operation is not found (graphql reports that).
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> = {},
  operationName?: string | null,
): number {
  const found = operationWalk(schema, document, variables, operationName);
  return found ? selectionCost(found.walk, found.root, found.operation.selectionSet) : 0;
}

/**
 * The cost of each top-level selection of the operation (a root field, or a fragment of them), for
 * the message of a query over the limit: which part to ask smaller pages of. Same rules as
 * {@link operationCost}, whose total they add up to; empty when the operation is not found.
 */
export function rootSelectionCosts(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> = {},
  operationName?: string | null,
): { selection: SelectionNode; cost: number }[] {
  const found = operationWalk(schema, document, variables, operationName);
  if (!found) return [];
  return found.operation.selectionSet.selections.map((selection) => ({
    selection,
    cost: selectionCost(found.walk, found.root, { kind: Kind.SELECTION_SET, selections: [selection] }),
  }));
}
