import {
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../connection.js';

/**
 * Static limits on GraphQL operations (issue 5, hostile queries): nesting depth, aliases and
 * directives as validation rules, and an estimated cost checked before execution. Introspection
 * fields (`__schema`, `__type`, ...) are not counted: GraphiQL's own query is deep, and the parser's
 * token limit and the body size limit bound it.
 */

/** The limits, all counts. */
export interface QueryLimits {
  /** Deepest field nesting of an operation, fragments included. */
  maxDepth: number;
  /** Aliased fields in one operation, fragments counted where spread. */
  maxAliases: number;
  /** Directives in one operation. */
  maxDirectives: number;
  /** Estimated cost (see {@link operationCost}). */
  maxCost: number;
}

/** Defaults: depth 12, 30 aliases, 50 directives, cost 50 000. */
export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxDepth: 12,
  maxAliases: 30,
  maxDirectives: 50,
  maxCost: 50_000,
};

/**
 * Items a list field without `first` is assumed to return (`Packet.dumps` has exactly eleven; an
 * `EntityChange.diff` holds the few fields an edit touches, so that a 500-event page of the change
 * stream with diffs stays within the default cost).
 */
const LIST_SIZE: Record<string, number> = { 'Packet.dumps': 11, 'EntityChange.diff': 10 };
const DEFAULT_LIST_SIZE = 20;

function limitError(code: string, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const map = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) map.set(definition.name.value, definition);
  }
  return map;
}

type Visit = (field: FieldNode, typeCondition: string | undefined, path: Set<string>) => void;

/**
 * Walks the fields of a selection set through fragments. `path` holds the fragments being expanded;
 * visitors pass it on when they descend, so a fragment cycle (reported by graphql's own rules) ends
 * instead of recursing forever.
 */
function forEachField(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  visit: Visit,
  path: Set<string> = new Set(),
  typeCondition?: string,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) visit(selection, typeCondition, path);
    else if (selection.kind === Kind.INLINE_FRAGMENT) {
      forEachField(
        selection.selectionSet,
        fragments,
        visit,
        path,
        selection.typeCondition?.name.value ?? typeCondition,
      );
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || path.has(name)) continue;
      path.add(name);
      forEachField(fragment.selectionSet, fragments, visit, path, fragment.typeCondition.name.value);
      path.delete(name);
    }
  }
}

/** Nesting depth of `selectionSet`, counted up to `stop` levels at most. */
function depthOf(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  stop: number,
  path?: Set<string>,
): number {
  if (stop <= 0) return 0;
  let deepest = 0;
  forEachField(
    selectionSet,
    fragments,
    (field, _type, inner) => {
      if (field.name.value.startsWith('__') || deepest >= stop) return;
      const below = field.selectionSet ? depthOf(field.selectionSet, fragments, stop - 1, inner) : 0;
      deepest = Math.max(deepest, 1 + below);
    },
    path,
  );
  return deepest;
}

/** Counts aliases and directives of the fields under `selectionSet` as executed (fragments expanded). */
function countUsage(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  counts: { aliases: number; directives: number },
  stopAt: number,
  path?: Set<string>,
): void {
  forEachField(
    selectionSet,
    fragments,
    (field, _type, inner) => {
      if (counts.aliases + counts.directives > stopAt) return;
      if (field.alias) counts.aliases++;
      counts.directives += field.directives?.length ?? 0;
      if (field.selectionSet) countUsage(field.selectionSet, fragments, counts, stopAt, inner);
    },
    path,
  );
}

/**
 * Validation rule: rejects operations nested deeper than `limits.maxDepth` (code `QUERY_TOO_DEEP`)
 * or with more than `maxAliases` aliases (`TOO_MANY_ALIASES`) or `maxDirectives` directives
 * (`TOO_MANY_DIRECTIVES`).
 */
export function queryShapeRule(limits: QueryLimits = DEFAULT_QUERY_LIMITS) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = fragmentsOf(context.getDocument());
    return {
      OperationDefinition(operation: OperationDefinitionNode) {
        const name = operation.name?.value ?? 'anonymous';
        const depth = depthOf(operation.selectionSet, fragments, limits.maxDepth + 1);
        if (depth > limits.maxDepth) {
          context.reportError(
            limitError('QUERY_TOO_DEEP', `operation ${name} nests fields more than ${limits.maxDepth} deep`, {
              max: limits.maxDepth,
            }),
          );
        }
        const counts = { aliases: 0, directives: 0 };
        countUsage(operation.selectionSet, fragments, counts, limits.maxAliases + limits.maxDirectives + 1);
        if (counts.aliases > limits.maxAliases) {
          context.reportError(
            limitError('TOO_MANY_ALIASES', `operation ${name} uses more than ${limits.maxAliases} aliases`, {
              max: limits.maxAliases,
            }),
          );
        }
        if (counts.directives > limits.maxDirectives) {
          context.reportError(
            limitError(
              'TOO_MANY_DIRECTIVES',
              `operation ${name} uses more than ${limits.maxDirectives} directives`,
              {
                max: limits.maxDirectives,
              },
            ),
          );
        }
      },
    };
  };
}

function intArgument(field: FieldNode, name: string, variables: Record<string, unknown>): number | undefined {
  const argument = field.arguments?.find((a) => a.name.value === name);
  if (!argument) return undefined;
  const value = argument.value;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const given = variables[value.name.value];
    return typeof given === 'number' ? given : undefined;
  }
  return undefined;
}

/** How many times the children of `field` run: its page size, or a list's assumed length, or 1. */
function multiplier(
  parent: GraphQLNamedType,
  definition: GraphQLField<unknown, unknown>,
  field: FieldNode,
  variables: Record<string, unknown>,
): number {
  if (definition.args.some((a) => a.name === 'first')) {
    const first = intArgument(field, 'first', variables) ?? DEFAULT_PAGE_SIZE;
    // Beyond the maximum the resolver refuses with PAGE_SIZE_EXCEEDED; it costs no more than that.
    return Math.min(Math.max(first, 0), MAX_PAGE_SIZE);
  }
  if (!isListType(getNullableType(definition.type))) return 1;
  // A connection's `edges` and `nodes` are the page its field's `first` already counted.
  if (parent.name.endsWith('Connection')) return 1;
  return LIST_SIZE[`${parent.name}.${definition.name}`] ?? DEFAULT_LIST_SIZE;
}

function selectionCost(
  schema: GraphQLSchema,
  parent: GraphQLNamedType,
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  path?: Set<string>,
): number {
  let total = 0;
  forEachField(
    selectionSet,
    fragments,
    (field, typeCondition, inner) => {
      if (field.name.value.startsWith('__')) return;
      const owner = (typeCondition && schema.getType(typeCondition)) || parent;
      if (!isObjectType(owner) && !isInterfaceType(owner)) return;
      const definition = owner.getFields()[field.name.value];
      if (!definition) return;
      const below = field.selectionSet
        ? selectionCost(
            schema,
            getNamedType(definition.type),
            field.selectionSet,
            fragments,
            variables,
            inner,
          )
        : 0;
      total += multiplier(owner, definition, field, variables) * (1 + below);
    },
    path,
  );
  return total;
}

/**
 * Estimated cost of the operation `operationName` (or the only one) of `document`: every field
 * costs 1, times the number of items its parent lists (a connection's `first`, default 20, at most
 * 500, counted once for its `edges`/`nodes`; `Packet.dumps` 11; another list 20). Roughly the number
 * of field values the answer holds.
 * Returns 0 when the operation is not found (graphql reports that).
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> = {},
  operationName?: string | null,
): number {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return 0;
  const root =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return 0;
  return selectionCost(schema, root, operation.selectionSet, fragmentsOf(document), variables);
}
