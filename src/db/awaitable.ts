/**
 * A value now (SQLite) or later (PostgreSQL). GraphQL takes either from a resolver; code that
 * composes reads `await`s it.
 */
export type Awaitable<T> = T | Promise<T>;

/**
 * `next(value)` at once when `value` is not a promise (a SQLite read), else once it resolves (a
 * PostgreSQL read): code composing reads stays synchronous on SQLite, where a resolver's speed is
 * measured (bench/RESULTS.md), without a promise per item. Throws what `next` throws (at once), or
 * rejects with what `value` rejects with or `next` throws.
 */
export function thenAwaitable<T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
