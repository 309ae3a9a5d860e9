/** Writes schema.graphql from the Pothos schema (`npm run schema:print`); test/schema.test.ts checks it is current. */
import { writeFileSync } from 'node:fs';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print.js';

writeFileSync(SCHEMA_FILE, printSchemaFile());
process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
