import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { SEARCH_STAGE } from '../../db/postgres/searchIndex.js';
import type { SearchFields } from '../../db/searchIndex.js';
import { searchFieldsOf } from '../searchFields.js';

/**
 * The search index's columns of a JSON dump's lines, staged on PostgreSQL as the COPY ingest finds
 * them (issue 17, docs/POSTGRES_PORT.md step 5 and Benchmark): the same one-pass extraction as the
 * SQLite ingest (sync/searchFields.ts over the spans of `mbidOffset`), copied into the TEMP table
 * `SEARCH_STAGE` of the dump's transaction (dropped at its end), from which db/postgres/searchIndex.ts
 * `indexStagedDump` fills `search_index`. Indexing a dump then parses no line as `jsonb` again,
 * which was 60 % of an import. A line whose columns the JS path does not read as jsonb would is
 * staged with `reparse` true and no columns: its columns are read in SQL from the stored line
 * (postgres/searchFields.ts), as before, so the index is the same either way.
 */

const CREATE_STAGE = `CREATE TEMP TABLE ${SEARCH_STAGE} (id bigint NOT NULL, mbid text NOT NULL,
  name text, sort_name text, aliases text, disambiguation text, reparse boolean NOT NULL) ON COMMIT DROP`;

// COPY's text format: a value holds no delimiter or end of row once escaped (see field), whereas
// a CSV value could hold a line reading `\.`, COPY's end of data.
const COPY_STAGE = `COPY pg_temp.${SEARCH_STAGE} (id, mbid, name, sort_name, aliases, disambiguation, reparse)
  FROM STDIN`;

/** `\u` in a line: only an escape can give the NUL or UTF-16 surrogate that jsonb refuses. */
const ESCAPE_U = Buffer.from('\\u', 'latin1');

/** A NUL or a surrogate code unit (half of an astral character, or a lone one). */
const JSONB_REWRITES = /[\0\ud800-\udfff]/;

/**
 * The columns of line `line` (spans from `mbidOffset`, sync/lineScan.ts) as the index takes them on
 * PostgreSQL, or undefined when SQL must read them from the stored line: when sync/searchFields.ts
 * cannot (a value other than a string or null), or when the line writes `\u` escapes and a column
 * holds a NUL or a UTF-16 surrogate, which the jsonb path turns into spaces (postgres/searchFields.ts
 * `PARSED_LINE`); a PostgreSQL text cannot hold a NUL at all.
 */
export function stagedFieldsOf(line: Buffer, spans: Int32Array, titled: boolean): SearchFields | undefined {
  const fields = searchFieldsOf(line, spans, titled);
  if (fields === undefined || !line.includes(ESCAPE_U)) return fields;
  for (const value of fields) if (value !== null && JSONB_REWRITES.test(value)) return undefined;
  return fields;
}

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One field of COPY's text format: NULL `\N`, text with backslash, newline, CR and tab escaped. */
function field(value: string | null): string {
  if (value === null) return '\\N';
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPED[c]!) : value;
}

/** Characters of staged rows held before they become one buffer (one write to the COPY). */
const PIECE_CHARS = 1 << 20;

/**
 * The staged rows of one dump, held in memory as COPY text until {@link SearchStage.copy} writes them
 * (the dump's COPY into `changes` holds the connection meanwhile). {@link SearchStage.heldBytes}
 * lets the ingest bound them: it copies them whenever they pass its limit.
 */
export class SearchStage {
  private pieces: Buffer[] = [];
  private text = '';
  private bytes = 0;

  /** Creates the stage's table in `client`'s transaction (once per dump, before any {@link copy}). */
  async create(client: pg.ClientBase): Promise<void> {
    await client.query(CREATE_STAGE);
  }

  /** Approximate bytes held (characters of COPY text). */
  get heldBytes(): number {
    return this.bytes + this.text.length;
  }

  /** Stages line `id` of `mbid` with its columns, or with none (`undefined`: SQL reads the line). */
  add(id: number, mbid: string, fields: SearchFields | undefined): void {
    this.text += fields
      ? `${id}\t${mbid}\t${field(fields[0])}\t${field(fields[1])}\t${field(fields[2])}\t${field(fields[3])}\tf\n`
      : `${id}\t${mbid}\t\\N\t\\N\t\\N\t\\N\tt\n`;
    if (this.text.length >= PIECE_CHARS) this.cut();
  }

  private cut(): void {
    this.bytes += this.text.length;
    this.pieces.push(Buffer.from(this.text, 'utf8'));
    this.text = '';
  }

  /** Copies the rows held into the stage and forgets them. @throws the COPY's error. */
  async copy(client: pg.ClientBase): Promise<void> {
    if (this.text.length > 0) this.cut();
    if (this.pieces.length === 0) return;
    const pieces = this.pieces;
    this.pieces = [];
    this.bytes = 0;
    await pipeline(pieces, client.query(copyFrom(COPY_STAGE)));
  }
}
