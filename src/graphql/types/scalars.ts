import { GraphQLError, Kind } from 'graphql';
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

builder.scalarType('DateTime', {
  description: 'A UTC instant in ISO 8601, up to microseconds: 2026-05-11T21:14:26.878674Z.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value === 'string' && ISO.test(value)) return value;
    throw new GraphQLError('DateTime must be ISO 8601 UTC, e.g. 2026-05-11T21:14:26Z', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  },
  parseLiteral: (node) => {
    if (node.kind === Kind.STRING && ISO.test(node.value)) return node.value;
    throw new GraphQLError('DateTime must be ISO 8601 UTC, e.g. 2026-05-11T21:14:26Z', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  },
});
