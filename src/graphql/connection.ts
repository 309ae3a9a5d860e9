import type { ObjectRef, ArgBuilder as PothosArgBuilder } from '@pothos/core';
import type { GraphQLError } from 'graphql';
import { type Awaitable, thenAwaitable } from '../db/reads.js';
import { builder, type Types } from './builder.js';
import { userError } from './errors.js';

/** Page size when `first` is not given. */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest `first` accepted; beyond it a PAGE_SIZE_EXCEEDED error. */
export const MAX_PAGE_SIZE = 500;

/**
 * A resolved Relay connection page. Cursors and the total count are made only when a query asks
 * for them: a page of `nodes` costs neither (bench/RESULTS.md, GraphQL). The count is a number
 * now (SQLite) or later (PostgreSQL, db/reads.ts `Awaitable`).
 */
export interface Page<T> {
  items: T[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  /** The `after` the page was read from: its endCursor when it holds no item (`first: 0`, the end). */
  after?: string | null;
  cursorOf: (item: T) => string;
  totalCount: () => Awaitable<number>;
}

/** What `PageInfo` shows. */
export interface PageInfoShape {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/** GraphQL `PageInfo`, shared by every connection. */
export const PageInfo = builder.objectRef<PageInfoShape>('PageInfo').implement({
  description: 'Relay page information.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', {
      description: 'More items follow this page: ask again with `after: endCursor`.',
    }),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage', {
      description: 'Items come before this page (it was read with `after`).',
    }),
    startCursor: t.exposeString('startCursor', {
      nullable: true,
      description: "The first item's cursor; null for an empty page.",
    }),
    endCursor: t.exposeString('endCursor', {
      nullable: true,
      description:
        "The last item's cursor, to pass as `after` for the next page; an empty page read with `after` repeats it.",
    }),
  }),
});

/** The descriptions of every connection's and edge's fields (this file and its own connections). */
export const CONNECTION_FIELDS = {
  edges: 'The items of this page with their cursors.',
  nodes: 'The items of this page (as `edges { node }`, without cursors).',
  pageInfo: 'Where this page stands in the connection.',
  cursor:
    'Opaque cursor of this item: pass it as `after` to read the items after it. Valid only with the same field and arguments (else BAD_CURSOR).',
  node: 'The item.',
} as const;

/** Defines `<Name>Connection` and `<Name>Edge` for a node type (edges, nodes, pageInfo, totalCount). */
export function connectionType<T>(name: string, node: ObjectRef<Types, T>) {
  const edge = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`).implement({
    description: `One ${name} item of a page and its cursor.`,
    fields: (t) => ({
      cursor: t.exposeString('cursor', { description: CONNECTION_FIELDS.cursor }),
      node: t.field({ type: node, description: CONNECTION_FIELDS.node, resolve: (e) => e.node as never }),
    }),
  });
  return builder.objectRef<Page<T>>(`${name}Connection`).implement({
    description: `A page of ${name} items (Relay cursor connection).`,
    fields: (t) => ({
      edges: t.field({
        type: [edge],
        description: CONNECTION_FIELDS.edges,
        resolve: (p) => p.items.map((node) => ({ cursor: p.cursorOf(node), node })),
      }),
      nodes: t.field({
        type: [node],
        description: CONNECTION_FIELDS.nodes,
        resolve: (p) => p.items as never,
      }),
      pageInfo: t.field({ type: PageInfo, description: CONNECTION_FIELDS.pageInfo, resolve: pageInfo }),
      totalCount: t.int({
        description: 'Items in the whole connection, not just this page.',
        resolve: (p) => p.totalCount(),
      }),
    }),
  });
}

type ArgBuilder = PothosArgBuilder<Types>;

/** Standard `first` and `after` arguments. */
export function pageArgs(arg: ArgBuilder) {
  return {
    first: arg.int({
      required: false,
      description: `Page size, default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}.`,
    }),
    after: arg.string({ required: false, description: 'endCursor of the previous page.' }),
  };
}

/**
 * Validates `first` (0..MAX_PAGE_SIZE, default DEFAULT_PAGE_SIZE).
 * @throws GraphQLError PAGE_SIZE_EXCEEDED or BAD_USER_INPUT
 */
export function pageSize(first: number | null | undefined): number {
  const size = first ?? DEFAULT_PAGE_SIZE;
  if (size < 0)
    throw userError('BAD_USER_INPUT', `"first" must not be negative, got ${size}`, { argument: 'first' });
  if (size > MAX_PAGE_SIZE) {
    throw userError('PAGE_SIZE_EXCEEDED', `"first" is ${size}; the maximum page size is ${MAX_PAGE_SIZE}`, {
      max: MAX_PAGE_SIZE,
      argument: 'first',
    });
  }
  return size;
}

/**
 * Opaque cursor of a non-negative integer key within one connection. `kind` names the connection
 * and everything that scopes it (`change/186123/recording`), so a cursor of one connection is
 * refused by another.
 */
export function encodeCursor(kind: string, key: number): string {
  return Buffer.from(`${kind}:${key}`).toString('base64url');
}

/**
 * Integer key of a cursor made by {@link encodeCursor} for the same kind; undefined when absent or
 * empty (`after: ""` is no cursor).
 * @throws GraphQLError BAD_CURSOR for a cursor of another connection, a negative key or garbage
 */
export function decodeCursor(kind: string, cursor: string | null | undefined): number | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(.+):(\d+)$/.exec(text);
  if (!match || match[1] !== kind || !Number.isSafeInteger(Number(match[2]))) throw badCursor(cursor);
  return Number(match[2]);
}

/** The BAD_CURSOR error for an `after` that is not a cursor of the connection asked. */
export function badCursor(cursor: string): GraphQLError {
  return userError(
    'BAD_CURSOR',
    `"after" is not a cursor of this connection with these arguments (a cursor is bound to the field ` +
      `and to its filters: pass it back with the same ones, or start again without it): ${JSON.stringify(cursor)}`,
  );
}

/** The `PageInfo` of a resolved page. */
export function pageInfo<T>(page: Page<T>): PageInfoShape {
  const { items, cursorOf } = page;
  return {
    hasNextPage: page.hasNextPage,
    hasPreviousPage: page.hasPreviousPage,
    startCursor: items.length > 0 ? cursorOf(items[0]!) : null,
    endCursor: items.length > 0 ? cursorOf(items[items.length - 1]!) : (page.after ?? null),
  };
}

/** What {@link resolvePage} needs to read one keyset page. `K` is the decoded cursor key. */
export interface PageQuery<T, K> {
  args: { first?: number | null; after?: string | null };
  /** Decodes `after`; undefined when absent. Throws BAD_CURSOR for a foreign cursor. */
  decodeAfter: (cursor: string | null | undefined) => K | undefined;
  /**
   * Up to `limit` rows after `after` (from the start when undefined), in connection order: at once
   * (SQLite) or as a promise (PostgreSQL).
   */
  fetch: (after: K | undefined, limit: number) => Awaitable<T[]>;
  totalCount: () => Awaitable<number>;
  cursorOf: (row: T) => string;
}

/**
 * Resolves one page of a Relay connection: validates `first`, decodes `after`, fetches one row
 * more than asked (to know whether more pages follow); edges, pageInfo and totalCount follow on demand.
 * The page comes at once when `fetch` answers at once (SQLite), else as a promise.
 * @throws GraphQLError PAGE_SIZE_EXCEEDED, BAD_USER_INPUT, BAD_CURSOR (thrown, never rejected)
 */
export function resolvePage<T, K>(
  query: PageQuery<T, K> & { fetch: (after: K | undefined, limit: number) => T[] },
): Page<T>;
export function resolvePage<T, K>(query: PageQuery<T, K>): Awaitable<Page<T>>;
export function resolvePage<T, K>(query: PageQuery<T, K>): Awaitable<Page<T>> {
  const limit = pageSize(query.args.first);
  const after = query.decodeAfter(query.args.after);
  // One row more than asked: its presence means more pages follow (with `first: 0`, that any does).
  return thenAwaitable(query.fetch(after, limit + 1), (rows) => ({
    items: rows.length > limit ? rows.slice(0, limit) : rows,
    hasNextPage: rows.length > limit,
    hasPreviousPage: after !== undefined,
    after: after === undefined ? null : query.args.after,
    cursorOf: query.cursorOf,
    totalCount: query.totalCount,
  }));
}
