import { TITLED_ENTITY_TYPES } from '../searchIndex.js';

/**
 * The search index's four columns of a `changes` row on PostgreSQL: the twin of db/searchIndex.ts
 * `FIELD_COLUMNS` (issue 17, docs/POSTGRES_PORT.md step 5), the same values SQLite's JSON functions
 * give wherever the JSON dumps can hold them:
 * - name: `title` for recordings, releases, release groups and works, `name` otherwise;
 * - sort name: `sort-name`; disambiguation: `disambiguation`;
 * - aliases: for each object of the `aliases` array, in order, its `name`, followed by its
 *   `sort-name` when that differs; joined by single spaces; NULL when the member is not an array
 *   or no alias has either.
 * A string gives its text, JSON null or an absent member NULL, `true`/`false` 1/0 and an integer
 * its digits, as in SQLite. Where SQLite and jsonb part (documented in docs/POSTGRES_PORT.md,
 * Search): a real number is jsonb's decimal text (`1e3` is `1000`, SQLite writes `1000.0`), an
 * object or array jsonb's text of it (keys sorted, a space after `:` and `,`: the same words, maybe
 * in another order); of duplicate members jsonb keeps the last.
 */

const TITLED = TITLED_ENTITY_TYPES.map((entity) => `'${entity}'`).join(', ');

/**
 * SQL: the text SQLite's `->>` gives of jsonb value `v` (an SQL expression repeated as written: a
 * column path, cheap to evaluate again); NULL for JSON null or an absent member.
 */
export function sqliteTextOf(value: string): string {
  const v = `(${value})`;
  return `CASE jsonb_typeof(${v})
    WHEN 'string' THEN ${v} #>> '{}'
    WHEN 'boolean' THEN CASE WHEN ${v} = 'true'::jsonb THEN '1' ELSE '0' END
    WHEN 'number' THEN CASE WHEN ${v}::text ~ '^-?[0-9]{1,18}$' THEN ${v}::text::bigint::text ELSE ${v}::text END
    WHEN 'null' THEN NULL
    ELSE ${v}::text END`;
}

/** SQL: is jsonb value `v` a JSON string (false when absent), for comparing as SQLite's `IS` does. */
const isString = (v: string) => `coalesce(jsonb_typeof(${v}) = 'string', false)`;

const ALIASES = `CASE WHEN jsonb_typeof(l.j -> 'aliases') = 'array' THEN (
    SELECT string_agg(CASE WHEN x.n IS NOT DISTINCT FROM x.s AND x.ns = x.ss THEN x.n
      ELSE concat_ws(' ', x.n, x.s) END, ' ' ORDER BY a.o)
    FROM jsonb_array_elements(l.j -> 'aliases') WITH ORDINALITY AS a (v, o)
    CROSS JOIN LATERAL (SELECT ${sqliteTextOf("a.v -> 'name'")} AS n, ${sqliteTextOf("a.v -> 'sort-name'")} AS s,
      ${isString("a.v -> 'name'")} AS ns, ${isString("a.v -> 'sort-name'")} AS ss) x
    WHERE jsonb_typeof(a.v) = 'object') END`;

/**
 * SQL: the line of `changes` row `c` parsed once as jsonb, as `l.j` (`OFFSET 0` keeps the planner
 * from copying the cast into every use). jsonb refuses the escapes `\u0000` and lone surrogates,
 * which a JSON dump line may hold: they read as a space here (only for the index: the stored line
 * is untouched), so such a line is indexed, never a failed dump.
 */
export const PARSED_LINE = `CROSS JOIN LATERAL (SELECT (CASE WHEN strpos(c.data, '\\u') > 0
    THEN regexp_replace(c.data, '\\\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', '\\\\u0020', 'g')
    ELSE c.data END)::jsonb AS j OFFSET 0) l`;

/** SQL: the four columns (name, sort_name, aliases, disambiguation) of row `c` joined to {@link PARSED_LINE}. */
export const FIELD_COLUMNS_PG = `CASE WHEN c.entity IN (${TITLED}) THEN ${sqliteTextOf("l.j -> 'title'")}
    ELSE ${sqliteTextOf("l.j -> 'name'")} END,
  ${sqliteTextOf("l.j -> 'sort-name'")},
  ${ALIASES},
  ${sqliteTextOf("l.j -> 'disambiguation'")}`;
