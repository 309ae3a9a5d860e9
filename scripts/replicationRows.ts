// The entity table rows of the demo feed's replication packets (scripts/replicationPlan.ts): per
// entity type, MusicBrainz's main columns in table order, built from a JSON dump line.
import { artistRow } from '../test/support/replicationArchives.js';

/** Row builders per entity type: MusicBrainz's columns in table order, from a JSON dump line. */
export const ROW_OF: Record<
  string,
  (line: Record<string, unknown>, id: number, at: string) => Record<string, unknown>
> = {
  artist: (line, id, at) => {
    const begin = dateParts((line['life-span'] as { begin?: string | null } | undefined)?.begin);
    return artistRow({
      id,
      gid: line.id as string,
      name: line.name as string,
      sortName: line['sort-name'] as string,
      begin_date_year: begin[0],
      begin_date_month: begin[1],
      begin_date_day: begin[2],
      gender: line.gender === 'Male' ? 1 : null,
      comment: line.disambiguation ?? '',
      last_updated: at,
    });
  },
  label: (line, id, at) => ({
    id,
    gid: line.id,
    name: line.name,
    begin_date_year: null,
    begin_date_month: null,
    begin_date_day: null,
    end_date_year: null,
    end_date_month: null,
    end_date_day: null,
    label_code: line['label-code'] ?? null,
    type: line.type === 'Original Production' ? 4 : null,
    area: null,
    comment: line.disambiguation ?? '',
    edits_pending: 0,
    last_updated: at,
    ended: false,
  }),
  area: (line, id, at) => ({
    id,
    gid: line.id,
    name: line.name,
    type: line.type === 'Country' ? 1 : 2,
    edits_pending: 0,
    last_updated: at,
    begin_date_year: null,
    begin_date_month: null,
    begin_date_day: null,
    end_date_year: null,
    end_date_month: null,
    end_date_day: null,
    ended: false,
    comment: line.disambiguation ?? '',
  }),
  release: (line, id, at) => ({
    id,
    gid: line.id,
    name: line.title,
    artist_credit: 2_900_000 + (id % 1000),
    release_group: 2_100_000 + (id % 1000),
    status: 1,
    packaging: null,
    language: 120,
    script: 28,
    barcode: line.barcode ?? null,
    comment: line.disambiguation ?? '',
    edits_pending: 0,
    quality: -1,
    last_updated: at,
  }),
  series: (line, id, at) => ({
    id,
    gid: line.id,
    name: line.name,
    comment: line.disambiguation ?? '',
    type: 2,
    ordering_type: 1,
    edits_pending: 0,
    last_updated: at,
  }),
  work: (line, id, at) => ({
    id,
    gid: line.id,
    name: line.title,
    type: 17,
    comment: line.disambiguation ?? '',
    edits_pending: 0,
    last_updated: at,
  }),
  recording: (line, id, at) => ({
    id,
    gid: line.id,
    name: line.title,
    artist_credit: 2_900_000 + (id % 1000),
    length: line.length ?? null,
    comment: line.disambiguation ?? '',
    edits_pending: 0,
    last_updated: at,
    video: line.video === true,
  }),
};

function dateParts(date: string | null | undefined): [number | null, number | null, number | null] {
  const parts = (date ?? '').split('-').map(Number);
  return [parts[0] || null, parts[1] || null, parts[2] || null];
}
