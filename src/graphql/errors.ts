import { GraphQLError } from 'graphql';

/** Codes of expected errors, in `extensions.code`. */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  | 'INVALID_MBID'
  | 'INVALID_PACKET'
  | 'BAD_CURSOR'
  | 'PAGE_SIZE_EXCEEDED'
  | 'INVALID_TABLE'
  | 'NOT_FOUND'
  | 'PENDING'
  | 'TOO_MANY_MBIDS'
  | 'HISTORY_PRUNED'
  | 'HISTORY_REWRITTEN';

/** An expected error, shown to the client with its code (unexpected errors stay masked by Yoga). */
export function userError(
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}
