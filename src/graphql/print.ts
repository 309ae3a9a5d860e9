import { fileURLToPath } from 'node:url';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './schema.js';

/** Path of the committed SDL file at the project root. */
export const SCHEMA_FILE = fileURLToPath(new URL('../../schema.graphql', import.meta.url));

/** The schema as SDL, sorted so that diffs show real changes only. */
export function printSchemaFile(): string {
  return `# Generated from the Pothos schema by \`npm run schema:print\`. Do not edit.\n\n${printSchema(lexicographicSortSchema(schema))}\n`;
}
