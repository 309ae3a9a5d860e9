import { GraphQLError, Kind, print } from 'graphql';
import { GraphQLSafeInt } from 'graphql-scalars';
import { builder } from '../builder.js';

// Replication seqids and xids outgrow GraphQL's 32-bit Int (PostgreSQL xids are 32-bit unsigned or
// 64-bit with epoch); SafeInt is a JSON number, exact up to 2^53 − 1.
builder.addScalarType('SafeInt', GraphQLSafeInt);

builder.scalarType('JSON', {
  description: 'Any JSON value (objects come back as objects, not strings).',
  serialize: (value) => value,
  parseValue: (value) => value,
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/**
 * Whether `value` is an instant in the form {@link ISO} that names a real date and time: the
 * calendar fields come back unchanged from `Date` (`2026-02-30` would roll over to March 2).
 */
function isInstant(value: string): boolean {
  if (!ISO.test(value)) return false;
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 19) === value.slice(0, 19);
}

const DATE_TIME_RULE = 'ISO 8601 UTC, e.g. 2026-05-11T21:14:26Z';

builder.scalarType('DateTime', {
  description: 'A UTC instant in ISO 8601, up to microseconds: 2026-05-11T21:14:26.878674Z.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value === 'string' && isInstant(value)) return value;
    throw new GraphQLError(`DateTime must be ${DATE_TIME_RULE}`, { extensions: { code: 'BAD_USER_INPUT' } });
  },
  parseLiteral: (node) => {
    if (node.kind === Kind.STRING && isInstant(node.value)) return node.value;
    // The literal itself, with its location: the argument it is given to is in the error's path.
    const given = node.kind === Kind.STRING ? JSON.stringify(node.value) : print(node);
    throw new GraphQLError(`DateTime must be ${DATE_TIME_RULE}; got ${given}`, {
      nodes: [node],
      extensions: { code: 'BAD_USER_INPUT' },
    });
  },
});
