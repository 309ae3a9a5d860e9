-- Custom migration (drizzle-kit does not write column compression).
-- A stored line longer than about 2 KB is compressed into TOAST. lz4 compresses and decompresses
-- several times faster than PostgreSQL's default pglz, for a slightly larger table (measured on the
-- 220 MB benchmark dump: the COPY's server CPU 3.9-4.2 s -> 2.9-3.6 s, the table 169 -> 180 MB;
-- bench/RESULTS.md). Only new rows are written with it; rows stored before stay readable as they
-- are. A server built without lz4 (a build option of PostgreSQL 14 and later) keeps pglz: the
-- setting's list of values says whether it has lz4.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE "changes" ALTER COLUMN "data" SET COMPRESSION lz4;
  END IF;
END
$$;
