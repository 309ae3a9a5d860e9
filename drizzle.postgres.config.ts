import { defineConfig } from 'drizzle-kit';

/** drizzle-kit for the PostgreSQL store (issue 17): `npm run db:generate` runs this and drizzle.sqlite.config.ts. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/postgres/schema.ts',
  out: './drizzle/postgres',
});
