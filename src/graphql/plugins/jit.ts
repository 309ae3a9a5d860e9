import { useGraphQlJit } from '@envelop/graphql-jit';
import {
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  getVariableValues,
  type Source,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Yoga plugin: queries run as code that graphql-jit compiles once per document (cached with
 * Yoga's parsed documents) instead of graphql-js walking the query for every item. A 50-item page
 * of changes served 15–25 % more requests per second with it, `{ __typename }` the same
 * (bench/RESULTS.md, GraphQL).
 *
 * graphql-jit's errors carry `locations` but not the AST nodes, and Yoga rebuilds every error from
 * its nodes or source positions before writing it, which dropped the locations. Each such error is
 * given the document's source and the positions of its locations instead, so answers keep them.
 *
 * graphql-jit also words a variable its scalar refuses as `Expected type DateTime.`, dropping the
 * scalar's own reason (`DateTime must be ISO 8601 UTC, e.g. ...`). When variables were refused,
 * graphql-js coerces them again for its messages, which keep the reason and its `code`.
 */
export function jitPlugin(): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      // A document graphql-jit cannot compile (a mutation: this schema has none) is answered with
      // its error, which clientErrorLogPlugin logs; without onError the plugin also wrote the error
      // with its stack trace to stderr, for any client to flood the log with.
      addPlugin(useGraphQlJit({}, { onError: () => {} }) as Plugin);
    },
    onExecute({ args }) {
      const source = args.document.loc?.source;
      if (!source) return;
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result || !result.errors?.length) return;
          const refused = result.data === undefined ? variableErrors(args) : undefined;
          setResult(refused ? { errors: refused } : withPositions(result, source));
        },
      };
    },
  };
}

/** graphql-js' errors for the operation's variables, or undefined when it accepts them. */
function variableErrors(args: {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}): readonly GraphQLError[] | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation?.variableDefinitions?.length) return undefined;
  const coerced = getVariableValues(args.schema, operation.variableDefinitions, args.variableValues ?? {});
  // Built-in scalars' refusals come without a code: a refused variable is the client's input.
  return coerced.errors?.map((error) =>
    error.extensions.code
      ? error
      : new GraphQLError(error.message, {
          nodes: error.nodes,
          originalError: error.originalError,
          extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
        }),
  );
}

function withPositions(result: ExecutionResult, source: Source): ExecutionResult {
  let lineStarts: number[] | undefined;
  const errors = result.errors!.map((error) => {
    if (error.nodes || error.positions || !error.locations?.length) return error;
    lineStarts ??= lineStartsOf(source.body);
    const starts = lineStarts;
    return new GraphQLError(error.message, {
      source,
      positions: error.locations.map(({ line, column }) => (starts[line - 1] ?? 0) + column - 1),
      path: error.path,
      originalError: error.originalError,
      extensions: error.extensions,
    });
  });
  return { ...result, errors };
}

/** Offset of each line's first character; lines end as GraphQL's lexer ends them (`\r\n`, `\n`, `\r`). */
function lineStartsOf(body: string): number[] {
  const starts = [0];
  for (const match of body.matchAll(/\r\n|[\n\r]/g)) starts.push(match.index + match[0].length);
  return starts;
}
