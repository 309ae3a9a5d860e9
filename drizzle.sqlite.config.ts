import { defineConfig } from 'drizzle-kit';

/** drizzle-kit for the SQLite store (the default): `npm run db:generate` runs this and drizzle.postgres.config.ts. */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: './drizzle/sqlite',
});
