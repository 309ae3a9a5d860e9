import {
  type DocumentNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  valueFromASTUntyped,
} from 'graphql';
import { type FragmentMap, fragmentsOf } from './selections.js';

/** What every step of the walk over an operation's selections shares. */
export interface Walk {
  schema: GraphQLSchema;
  fragments: FragmentMap;
  variables: Record<string, unknown>;
}

/**
 * The operation `operationName` (or the only one) of `document`, its root type and the walk the
 * cost rules take through it (graphql/plugins/cost.ts); undefined when either is not found.
 */
export function operationWalk(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName?: string | null,
): { walk: Walk; root: GraphQLObjectType; operation: OperationDefinitionNode } | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return undefined;
  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const walk = {
    schema,
    fragments: fragmentsOf(document),
    variables: { ...defaultsOf(operation), ...variables },
  };
  return { walk, root, operation };
}

/**
 * The operation's variable defaults (`query($n: Int = 500)`): a variable the request leaves out
 * runs with its default, so it counts with it too. A variable given as null stays null.
 */
function defaultsOf(operation: OperationDefinitionNode): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? [])
    if (definition.defaultValue)
      defaults[definition.variable.name.value] = valueFromASTUntyped(definition.defaultValue);
  return defaults;
}
