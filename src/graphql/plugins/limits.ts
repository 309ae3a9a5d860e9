import {
  type ASTVisitor,
  GraphQLError,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import { type FragmentMap, forEachField, fragmentsOf } from './selections.js';

/**
 * Static limits on GraphQL operations (issue 5, hostile queries): nesting depth, aliases and
 * directives as validation rules, and an estimated cost (cost.ts) checked before execution. Introspection
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
  /** Estimated cost (see cost.ts, `operationCost`). */
  maxCost: number;
}

/** Defaults: depth 12, 30 aliases, 50 directives, cost 50 000. */
export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxDepth: 12,
  maxAliases: 30,
  maxDirectives: 50,
  maxCost: 50_000,
};

function limitError(code: string, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

/** Nesting depth of `selectionSet`, counted up to `stop` levels at most. */
function depthOf(
  selectionSet: SelectionSetNode,
  fragments: FragmentMap,
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
  fragments: FragmentMap,
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
