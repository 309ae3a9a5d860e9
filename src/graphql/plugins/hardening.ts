import {
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  isObjectType,
  Kind,
  parse,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

type RequestParser = Parameters<Parameters<NonNullable<Plugin['onRequestParse']>>[0]['setRequestParser']>[0];

import { operationCost, rootSelectionCosts } from './cost.js';
import { DEFAULT_QUERY_LIMITS, type QueryLimits, queryShapeRule } from './limits.js';

/**
 * Hardening of the GraphQL endpoint against hostile or careless requests (issue 5): a request body
 * size limit, a parser token limit, the shape rules and cost limit of limits.ts, a per-request time
 * budget, and a `code` on every error. Unexpected errors stay masked by Yoga (message "Unexpected
 * error.", code INTERNAL_SERVER_ERROR) and are logged by the server's logger; the server goes on.
 */

/** Every limit of the endpoint. Sizes in bytes, durations in milliseconds. */
export interface GraphqlLimits extends QueryLimits {
  /** Largest request body (POST) or query string (GET). */
  maxBodyBytes: number;
  /** Most lexical tokens in a query document. */
  maxTokens: number;
  /** Time a request's resolvers may take; fields resolved after it fail with TIME_BUDGET_EXCEEDED. */
  timeBudgetMs: number;
}

/** Defaults: 100 KiB, 10 000 tokens, 10 s, and {@link DEFAULT_QUERY_LIMITS}. */
export const DEFAULT_GRAPHQL_LIMITS: GraphqlLimits = {
  ...DEFAULT_QUERY_LIMITS,
  maxBodyBytes: 100 * 1024,
  maxTokens: 10_000,
  timeBudgetMs: 10_000,
};

/** Per execution context: when its time is up (ms of `clock`), the budget it had, and the clock. */
const deadlines = new WeakMap<object, { at: number; budgetMs: number; clock: () => number }>();
const guarded = new WeakSet<GraphQLSchema>();

// graphql-js (16.12 on) stops checking that fields can be merged when a selection repeats fields
// past its budget, with this message and no code.
const VALIDATION_ABORTED = 'Validation aborted.';

function tooManyOverlaps(): GraphQLError {
  return new GraphQLError(
    'the query repeats fields too often to be checked (the same field many times in one selection); ask for each field once',
    { extensions: { code: 'QUERY_TOO_COMPLEX' } },
  );
}

function budgetError(budgetMs: number): GraphQLError {
  return new GraphQLError(`the request took more than its time budget of ${budgetMs} ms`, {
    extensions: { code: 'TIME_BUDGET_EXCEEDED', budgetMs },
  });
}

/**
 * Makes every field resolver of `schema` check the request's deadline first (set per execution by
 * {@link hardeningPlugin}); once the time is up, the remaining fields that have a resolver fail
 * instead of running (a field without one only reads a property of its parent).
 * Idempotent. Resolvers here are synchronous SQLite reads: a check between fields is the one place
 * a request can be stopped.
 */
export function guardResolvers(schema: GraphQLSchema): void {
  if (guarded.has(schema)) return;
  guarded.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      // A property read does no work to stop, and left without a resolver graphql-jit reads it
      // inline instead of calling a function with a fresh `info` per value.
      if (!field.resolve) continue;
      const resolve = field.resolve;
      field.resolve = (source, args, context, info) => {
        const deadline = deadlines.get(context as object);
        if (deadline && deadline.clock() > deadline.at) throw budgetError(deadline.budgetMs);
        return resolve(source, args, context, info);
      };
    }
  }
}

/**
 * True when `request` declares its length (Content-Length, in digits) within `limit`: Node's HTTP
 * parser then hands on exactly that many bytes of body, so the body needs no counting and Yoga's
 * parser reads it once, without a copy into a new Request (bench/RESULTS.md, 2026-11-24). False
 * when it declares none: the body is then counted as it is read ({@link readLimited}).
 * @throws GraphQLError PAYLOAD_TOO_LARGE when the declared length is over `limit`
 */
function hasDeclaredLength(request: Request, limit: number): boolean {
  const declared = request.headers.get('content-length');
  if (declared === null) return false;
  const length = Number(declared);
  if (Number.isFinite(length) && length > limit) throw tooLarge(limit);
  return /^\d+$/.test(declared);
}

/** The body of `request`, counted as it is read. @throws GraphQLError PAYLOAD_TOO_LARGE past `limit` */
async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** graphql-js' syntax error for a document past `maxTokens`, with a code of its own; other errors as they are. */
function tooManyTokens(error: unknown, limit: number): unknown {
  if (!(error instanceof GraphQLError) || !/ contains more tha[nt] \d+ tokens/.test(error.message))
    return error;
  return new GraphQLError(
    `the document has more than ${limit} tokens (names, punctuation and values); send a smaller one`,
    { extensions: { code: 'TOO_MANY_TOKENS', max: limit } },
  );
}

function tooLarge(limit: number): GraphQLError {
  return new GraphQLError(`request body is larger than ${limit} bytes`, {
    extensions: { code: 'PAYLOAD_TOO_LARGE', max: limit, http: { status: 413 } },
  });
}

/** Collapses the per-field budget errors of one request into one, and gives code-less request errors a code. */
function tidyErrors(result: ExecutionResult): ExecutionResult | undefined {
  if (!result.errors?.length) return undefined;
  let budgetSeen = false;
  let changed = false;
  const errors: GraphQLError[] = [];
  for (const error of result.errors) {
    const code = error.extensions?.code;
    if (code === 'TIME_BUDGET_EXCEEDED') {
      changed ||= budgetSeen;
      if (budgetSeen) continue;
      budgetSeen = true;
    }
    if (code === undefined && !error.path) {
      // Request-level errors without a code: variable values that do not coerce, unknown operation.
      changed = true;
      errors.push(
        new GraphQLError(error.message, {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
        }),
      );
      continue;
    }
    errors.push(error);
  }
  return changed ? { ...result, errors } : undefined;
}

/**
 * QUERY_TOO_COMPLEX for an operation of `cost` over `max`, located at its dearest top-level field
 * and naming it with its cost, so that one knows which page to ask smaller.
 */
function tooCostly(args: ExecutionArgs, cost: number, max: number): GraphQLError {
  const parts = rootSelectionCosts(args.schema, args.document, args.variableValues ?? {}, args.operationName);
  const dearest = parts.reduce<(typeof parts)[number] | undefined>(
    (a, b) => (a && a.cost >= b.cost ? a : b),
    undefined,
  );
  const name =
    dearest?.selection.kind === Kind.FIELD
      ? `\`${dearest.selection.alias?.value ?? dearest.selection.name.value}\``
      : 'a fragment';
  const where = dearest ? ` (${name} costs ${dearest.cost})` : '';
  return new GraphQLError(
    `query cost ${cost} is over the limit of ${max}${where}; ask for smaller pages: each list counts its ` +
      '`first` (default 20) and nested lists multiply (README, Integrity and reliability: Hostile queries)',
    {
      nodes: dearest ? [dearest.selection] : undefined,
      extensions: { code: 'QUERY_TOO_COMPLEX', cost, max },
    },
  );
}

/**
 * The Yoga plugin enforcing `limits` (defaults {@link DEFAULT_GRAPHQL_LIMITS}). Errors carry codes:
 * PAYLOAD_TOO_LARGE (HTTP 413), TOO_MANY_TOKENS, QUERY_TOO_DEEP,
 * TOO_MANY_ALIASES, TOO_MANY_DIRECTIVES, QUERY_TOO_COMPLEX, TIME_BUDGET_EXCEEDED, BAD_USER_INPUT.
 */
export function hardeningPlugin(
  overrides: Partial<GraphqlLimits> = {},
  clock: () => number = Date.now,
): Plugin<Record<string, unknown>> {
  const limits = { ...DEFAULT_GRAPHQL_LIMITS, ...overrides };
  const shapeRule = queryShapeRule(limits);
  // Yoga's own Request (the @whatwg-node ponyfill): Node's global one (undici) cost a request of
  // `{ __typename }` about 20 µs more to build (bench/RESULTS.md).
  let fetchAPI: { Request: typeof Request; Headers: typeof Headers } = { Request, Headers };
  return {
    onYogaInit({ yoga }) {
      fetchAPI = yoga.fetchAPI;
    },
    onSchemaChange({ schema }) {
      guardResolvers(schema as GraphQLSchema);
    },
    onRequestParse({ request, url, requestParser, setRequestParser }) {
      if (url.search.length > limits.maxBodyBytes) throw tooLarge(limits.maxBodyBytes);
      if (request.method !== 'POST' || !requestParser) return;
      // A body of undeclared length (chunked) is read under the limit first; Yoga's own parser (JSON,
      // multipart, ...) parses it either way.
      const limited = async (req: Request) => {
        if (hasDeclaredLength(req, limits.maxBodyBytes)) return requestParser(req);
        const body = (await readLimited(req, limits.maxBodyBytes)) as unknown as BodyInit;
        const headers = new fetchAPI.Headers(req.headers);
        headers.delete('content-length');
        return requestParser(new fetchAPI.Request(req.url, { method: req.method, headers, body }));
      };
      setRequestParser(limited as RequestParser);
    },
    onParse({ params, setParseFn }) {
      setParseFn((source) => {
        try {
          return parse(source, { ...params.options, maxTokens: limits.maxTokens });
        } catch (error) {
          throw tooManyTokens(error, limits.maxTokens);
        }
      });
    },
    onValidate({ addValidationRule }) {
      addValidationRule(shapeRule);
      return ({ result, setResult }) => {
        if (result.some((error) => error.message === VALIDATION_ABORTED)) setResult([tooManyOverlaps()]);
      };
    },
    onExecute({ args, setResultAndStopExecution }) {
      const cost = operationCost(args.schema, args.document, args.variableValues ?? {}, args.operationName);
      if (cost > limits.maxCost) {
        setResultAndStopExecution({ errors: [tooCostly(args, cost, limits.maxCost)] });
        return;
      }
      deadlines.set(args.contextValue as object, {
        at: clock() + limits.timeBudgetMs,
        budgetMs: limits.timeBudgetMs,
        clock,
      });
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const tidy = tidyErrors(result);
          if (tidy) setResult(tidy);
        },
      };
    },
  };
}
