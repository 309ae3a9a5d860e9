import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../logger.js';

/**
 * Logs a client error (bad query, unknown operation type, NOT_FOUND, ...) as one JSON line at debug
 * with its code: expected errors are the client's business, so they must not flood the log at
 * info or above, and never as a stack trace.
 */
export function logClientError(logger: Logger, error: Pick<GraphQLError, 'message' | 'extensions'>): void {
  logger.debug(
    { event: 'graphql-client-error', code: error.extensions?.code ?? 'UNKNOWN', err: error.message },
    'GraphQL request refused',
  );
}

/** Yoga plugin: every error with a code in an answer is logged by {@link logClientError}. */
export function clientErrorLogPlugin(logger: Logger): Plugin {
  return {
    onResultProcess({ result }) {
      for (const single of Array.isArray(result) ? result : [result]) {
        const errors = (single as ExecutionResult).errors;
        if (!errors) continue;
        for (const error of errors) if (error.extensions?.code) logClientError(logger, error);
      }
    },
  };
}
