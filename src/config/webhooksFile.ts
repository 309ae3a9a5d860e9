import { readFileSync } from 'node:fs';
import type * as Yaml from 'yaml';
import { ENTITY_TYPES, type EntityType, entityEnumName } from '../feed/entities.js';
import { isMbid } from '../feed/mbid.js';

/**
 * One webhook of the webhooks file (README, Webhooks), validated. `secret` is never logged, shown
 * or stored; `displayUrl` is `url` without credentials, query or fragment, safe to show.
 */
export interface WebhookSpec {
  /** Names the webhook in the database, `status`, `/metrics` and GraphQL: `name`, or `displayUrl`. */
  name: string;
  /** Where events are POSTed, as written (it may carry credentials or a query). */
  url: string;
  displayUrl: string;
  /** Key of the HMAC-SHA256 signature of each body. */
  secret: string;
  /** Entity types whose events are sent (upstream spelling); null: all. */
  entities: EntityType[] | null;
  /** MBIDs whose events are sent (lower case); null: all. */
  mbids: string[] | null;
  /** Most events in one POST (1 to 500). */
  batchSize: number;
}

/** Events per POST when the file does not say. */
export const DEFAULT_BATCH_SIZE = 100;
/** Most events per POST (the change stream's largest page). */
export const MAX_BATCH_SIZE = 500;
/** Shortest secret accepted: a short HMAC key is guessable from signed bodies. */
export const MIN_SECRET_LENGTH = 16;

const FIELDS = ['url', 'secret', 'entities', 'mbids', 'name', 'batchSize'] as const;
const ENUM_NAMES: ReadonlyMap<string, EntityType> = new Map(
  ENTITY_TYPES.map((entity) => [entityEnumName(entity), entity]),
);

// The YAML parser, imported only by the commands that read a webhooks file (see loadYamlParser):
// about 70-120 ms of start-up that `sync --once` without webhooks, `import` and `status` skip.
let yaml: typeof Yaml | undefined;

/**
 * Imports the YAML parser that {@link readWebhooksFile} needs; config/load.ts `prepareConfig`
 * calls it before the configuration is loaded when a webhooks file is given.
 */
export async function loadYamlParser(): Promise<void> {
  if (yaml) return;
  const loaded = (await import('yaml')) as typeof Yaml & { default?: typeof Yaml };
  // The package is CommonJS: bundled (scripts/bundle.ts), its chunk exports it as `default` only.
  const parser = typeof loaded.parseDocument === 'function' ? loaded : loaded.default;
  if (typeof parser?.parseDocument !== 'function')
    throw new Error('the YAML parser (package yaml) did not load');
  yaml = parser;
}

function parser(): typeof Yaml {
  if (!yaml) throw new Error('the YAML parser is not loaded: call loadYamlParser() first');
  return yaml;
}

/** A value of the file with where it is: `[1].entities[0]`, line 5. */
type Path = (string | number)[];

function pathText(path: Path): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

/** `url` without user, password, query or fragment: what livefeed shows of a webhook's URL. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Reads and validates the webhooks file at `path`: a YAML or JSON list of
 * `{ url, secret, entities?, mbids?, name?, batchSize? }`.
 * @returns the webhooks, in file order
 * @throws Error whose message lists every problem, one per line, each with its place in the file
 *   (`[1].entities[0] (line 5): ...`); secrets are never quoted.
 */
export function readWebhooksFile(path: string): WebhookSpec[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the webhooks file: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  return parseWebhooks(text);
}

/**
 * Validates the text of a webhooks file (YAML, or JSON, which YAML includes).
 * @throws Error as {@link readWebhooksFile}
 */
export function parseWebhooks(text: string): WebhookSpec[] {
  const { isMap, isSeq, LineCounter, parseDocument } = parser();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new Error(doc.errors.map((e) => syntaxError(e, lines)).join('\n'));
  }
  const problems: string[] = [];
  const where = (path: Path, message: string) => {
    // The node itself, or for a missing field the entry that lacks it.
    const node = (doc.getIn(path, true) ?? doc.getIn(path.slice(0, -1), true)) as
      | { range?: [number, number, number] }
      | undefined;
    const line = node?.range ? ` (line ${lines.linePos(node.range[0]).line})` : '';
    problems.push(`${pathText(path) || 'the file'}${line}: ${message}`);
  };
  const root = doc.contents;
  if (!isSeq(root)) {
    throw new Error(
      'must be a list of webhooks ({ url, secret, entities, mbids }); see the README, Webhooks',
    );
  }
  const value = resolved(doc);
  const specs = value.map((entry, index) => checkEntry(entry, index, where, isMap(root.items[index])));
  checkUniqueNames(specs, where);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return specs.filter((spec): spec is WebhookSpec => spec !== undefined);
}

/**
 * The file's values. An alias with no anchor (`secret: *x…`, a secret starting with `*` left
 * unquoted) fails only here, and the YAML library's message quotes the alias: it is replaced.
 */
function resolved(doc: Yaml.Document): unknown[] {
  try {
    return doc.toJS() as unknown[];
  } catch {
    throw new Error(
      'a value starting with * or & is read as a YAML alias or anchor (value not shown): put the value in quotes',
    );
  }
}

/**
 * `value` as JSON text when it is shorter than any secret accepted ({@link MIN_SECRET_LENGTH}),
 * else a note: a secret written in the wrong field must not show in a message.
 */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return typeof value === 'string' && value.length < MIN_SECRET_LENGTH ? text : '(value not shown)';
}

/** A YAML or JSON syntax error with its line and column, without the text around it (a secret). */
function syntaxError(
  error: { code: string; message: string; pos: [number, number] },
  lines: Yaml.LineCounter,
): string {
  const { line, col } = lines.linePos(error.pos[0]);
  const reason = error.message
    .replace(/: ".*$/s, '')
    .replace(/ at line \d+, column \d+.*$/s, '')
    .trim();
  return `line ${line}, column ${col}: not valid YAML or JSON (${error.code}: ${reason})`;
}

type Where = (path: Path, message: string) => void;

function checkEntry(
  entry: unknown,
  index: number,
  where: Where,
  isMapping: boolean,
): WebhookSpec | undefined {
  if (!isMapping || entry === null || typeof entry !== 'object') {
    where([index], 'must be a mapping { url, secret, entities, mbids }');
    return undefined;
  }
  const fields = entry as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if ((FIELDS as readonly string[]).includes(key)) continue;
    const known = key.length < MIN_SECRET_LENGTH;
    where(
      known ? [index, key] : [index],
      `unknown field ${known ? `"${key}"` : '(name not shown)'} (expected ${FIELDS.join(', ')})`,
    );
  }
  const url = checkUrl(fields.url, [index, 'url'], where);
  const secret = checkSecret(fields.secret, [index, 'secret'], where);
  const entities = checkList(fields.entities, [index, 'entities'], where, entityOf);
  const mbids = checkList(fields.mbids, [index, 'mbids'], where, mbidOf);
  const batchSize = checkBatchSize(fields.batchSize, [index, 'batchSize'], where);
  const name = checkName(fields.name, [index, 'name'], where);
  if (!url || secret === undefined || entities === undefined || mbids === undefined) return undefined;
  if (batchSize === undefined || name === undefined) return undefined;
  const shown = displayUrl(url);
  return { name: name ?? shown, url: url.href, displayUrl: shown, secret, entities, mbids, batchSize };
}

function checkUrl(value: unknown, path: Path, where: Where): URL | undefined {
  if (value === undefined) return void where(path, 'missing: where to POST events (http or https)');
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  // The value is not quoted: a secret put in the wrong field must not show.
  if (!url || !/^https?:$/.test(url.protocol))
    return void where(path, 'must be an http or https URL (value not shown)');
  return url;
}

function checkSecret(value: unknown, path: Path, where: Where): string | undefined {
  if (value === undefined) return void where(path, 'missing: the key that signs each body (HMAC-SHA256)');
  // YAML reads an unquoted run of digits as a number (and loses digits past 2^53): ask for quotes.
  if (typeof value === 'number' || typeof value === 'boolean')
    return void where(path, 'is read as a number or boolean, not a text: quote it (value not shown)');
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH)
    return void where(path, `must be a text of at least ${MIN_SECRET_LENGTH} characters (value not shown)`);
  return value;
}

function checkName(value: unknown, path: Path, where: Where): string | null | undefined {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^[^\p{Cc}]{1,100}$/u.test(value) || value.trim() !== value)
    return void where(
      path,
      'must be a text of 1 to 100 characters without control characters or outer spaces',
    );
  return value;
}

function checkBatchSize(value: unknown, path: Path, where: Where): number | undefined {
  if (value === undefined) return DEFAULT_BATCH_SIZE;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_BATCH_SIZE)
    return void where(path, `must be a whole number from 1 to ${MAX_BATCH_SIZE}`);
  return value;
}

type Checked<T> = { ok: T } | { error: string };

function entityOf(item: unknown): Checked<EntityType> {
  const entity = typeof item === 'string' ? ENUM_NAMES.get(item) : undefined;
  if (entity) return { ok: entity };
  return {
    error: `unknown entity type ${shown(item)} (expected one of ${[...ENUM_NAMES.keys()].join(', ')})`,
  };
}

function mbidOf(item: unknown): Checked<string> {
  return isMbid(item) ? { ok: item.toLowerCase() } : { error: `not an MBID: ${shown(item)}` };
}

/** A filter list: absent → null (everything); else every item checked by `check`, duplicates dropped. */
function checkList<T>(
  value: unknown,
  path: Path,
  where: Where,
  check: (item: unknown) => Checked<T>,
): T[] | null | undefined {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) return void where(path, 'must be a list');
  if (value.length === 0)
    return void where(path, 'an empty list matches nothing: leave the field out to match every event');
  const items: T[] = [];
  let bad = false;
  value.forEach((item, i) => {
    const checked = check(item);
    if ('ok' in checked) items.push(checked.ok);
    else {
      bad = true;
      where([...path, i], checked.error);
    }
  });
  return bad ? undefined : [...new Set(items)];
}

function checkUniqueNames(specs: (WebhookSpec | undefined)[], where: Where): void {
  const first = new Map<string, number>();
  specs.forEach((spec, index) => {
    if (!spec) return;
    const earlier = first.get(spec.name);
    if (earlier === undefined) first.set(spec.name, index);
    else
      where(
        [index],
        `names the same webhook as [${earlier}] ("${spec.name}"): give one of them a distinct name (its cursor is kept under its name)`,
      );
  });
}
