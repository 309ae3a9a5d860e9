import type { FeedFileRow } from '../../db/queries.js';
import { signaturePath } from '../../feed/protocol/urls.js';
import { builder } from '../builder.js';

/** GraphQL `SignatureStatus` (FEED.md, Signatures). */
export const SignatureStatusEnum = builder.enumType('SignatureStatus', {
  description: "The outcome of checking a file's detached OpenPGP signature.",
  values: {
    VERIFIED: { description: 'The detached signature verified against a configured signing key.' },
    UNVERIFIED: {
      description:
        'Not checked: no signing key configured, verification off, or the operator accepted this file without ' +
        'its missing signature (--accept-unsigned).',
    },
    INVALID: { description: 'The signature did not verify (stored only with --verify warn).' },
    MISSING: { description: 'The feed had no signature (stored only with --verify warn).' },
  } as const,
});

/** Path on this server that serves a kept feed file (never upstream, never with the token). */
export function fileLink(origin: string, name: string): string {
  return `${origin}/files/${name}`;
}

/** GraphQL `FeedFile`: an archive fetched from the feed. */
export const FeedFileRef = builder.objectRef<FeedFileRow>('FeedFile').implement({
  description: 'An archive fetched from the feed, with its checksum and signature status.',
  fields: (t) => ({
    name: t.exposeString('name', {
      description: 'Path under the feed root, e.g. json-dumps/json-dump-186123/artist.tar.xz.',
    }),
    url: t.string({
      description: 'Download link on this server (upstream bytes, no token).',
      resolve: (f, _a, ctx) => fileLink(ctx.origin, f.name),
    }),
    signatureUrl: t.string({
      nullable: true,
      description: 'Link to the detached signature on this server, when the feed had one.',
      resolve: (f, _a, ctx) => (f.signatureStoredPath ? fileLink(ctx.origin, signaturePath(f.name)) : null),
    }),
    size: t.exposeInt('size', { description: 'Bytes.' }),
    sha256: t.exposeString('sha256', {
      description: 'SHA-256 of the bytes, hex (computed here: upstream serves no checksums).',
    }),
    signature: t.field({
      type: SignatureStatusEnum,
      description: 'What the check of its detached signature found (--verify).',
      resolve: (f) => f.signature as 'VERIFIED',
    }),
    fingerprint: t.exposeString('fingerprint', {
      nullable: true,
      description: 'Fingerprint of the key that verified the file.',
    }),
    fetchedAt: t.expose('fetchedAt', { type: 'DateTime', description: 'When this instance downloaded it.' }),
  }),
});
