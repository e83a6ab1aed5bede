// How the decode pass cuts row groups into tasks. One task per row group leaves a worker idle when
// a file has fewer large row groups than workers, or unequal ones (4,096 + 904 rows: one worker did
// 82% of the work). A row group can be read by several workers, each for a run of its wanted rows:
// the pieces hold the same rows as the whole, so the output cannot change (rows are keyed, and
// every trajectory is spilled and walked by its key wherever it was decoded).
//
// What a piece costs. Its rows' values are normalised, hashed and spilled (per wanted row), and the
// pages holding them are decompressed: a page that holds no wanted row is skipped unread, a streamed
// page (zstd, gzip) is given up after its last wanted row, a page decoded whole (snappy, LZ4) is
// decompressed whole. So where a row group is one large page (the twin's DuckDB-written chunks), the
// last piece of it decompresses as much as the whole group did, and where its pages hold a few rows
// each (pyarrow's 1 MB pages) a piece decompresses about its own share. A cut trades any extra
// decompression (CPU) for a shorter wall; it is made only where the simulated schedule of the pool
// (tasks in file order, each to the first free worker) gets at least MIN_GAIN shorter. Decompression
// is DECOMPRESS_SHARE of a whole run's work, from the profile of the upstream-shaped twin (zstd about
// 35% of a worker's time); the shares only steer where to cut.
export const DECOMPRESS_SHARE = 0.35;
const MIN_GAIN = 0.05;

export interface GroupLoad {
  /** Rows in the row group. */
  groupRows: number;
  /** Wanted rows, ascending, within the row group. */
  rows: readonly number[];
  /** About how many rows a page of the group's largest column holds (groupRows: one page). */
  pageRows: number;
  /** Whether a page holding a wanted row is decompressed whole (else up to its last wanted row). */
  wholePages: boolean;
  /** Whether this group may be split (false: e.g. its pages are too large to be held twice); asked only of a cut that would be taken. */
  splittable: () => boolean;
}

/** Wanted rows `from` (inclusive) to `to` (exclusive) of group `group`. */
export interface Piece {
  group: number;
  from: number;
  to: number;
}

/** The rows' worth of pages a piece decompresses (see the top), pages taken as `pageRows` rows each. */
export function decompressedRows(g: GroupLoad, from: number, to: number): number {
  const size = Math.max(1, g.pageRows);
  let rows = 0;
  let page = -1;
  let last = -1;
  const close = () => {
    if (page >= 0) rows += g.wholePages ? Math.min(g.groupRows, (page + 1) * size) - page * size : last + 1 - page * size;
  };
  for (let i = from; i < to; i++) {
    const row = g.rows[i]!;
    const p = Math.floor(row / size);
    if (p !== page) {
      close();
      page = p;
    }
    last = row;
  }
  close();
  return rows;
}

/**
 * The cost of a piece in rows decompressed: its pages, plus `perRow` for each of its wanted rows.
 * planPieces sets `perRow` so that decompression is DECOMPRESS_SHARE of all the groups' cost.
 */
export function pieceCost(g: GroupLoad, from: number, to: number, perRow: number): number {
  return to <= from ? 0 : decompressedRows(g, from, to) + perRow * (to - from);
}

/** The cost of a wanted row such that decompressing `groups` whole is DECOMPRESS_SHARE of their work. */
export function rowWeight(groups: readonly GroupLoad[]): number {
  let pages = 0;
  let wanted = 0;
  for (const g of groups) {
    pages += decompressedRows(g, 0, g.rows.length);
    wanted += g.rows.length;
  }
  return wanted === 0 ? 0 : (((1 - DECOMPRESS_SHARE) / DECOMPRESS_SHARE) * pages) / wanted;
}

/** Wall of `costs` run in order on `workers` workers, each task going to the first free worker. */
export function makespan(costs: readonly number[], workers: number): number {
  const free = new Array<number>(Math.max(1, workers)).fill(0);
  for (const c of costs) {
    let k = 0;
    for (let j = 1; j < free.length; j++) if (free[j]! < free[k]!) k = j;
    free[k]! += c;
  }
  return Math.max(...free);
}

/**
 * The decode tasks for `groups` (in file order) on `workers` workers: every group whole, except
 * where cutting one piece in two shortens the simulated wall by MIN_GAIN or more. Pieces stay in
 * file order, each group's pieces in row order, and together they hold every wanted row once.
 */
export function planPieces(groups: readonly GroupLoad[], workers: number): Piece[] {
  let pieces: Piece[] = groups.map((g, group) => ({ group, from: 0, to: g.rows.length }));
  if (workers < 2) return pieces;
  const perRow = rowWeight(groups);
  // A cut changes two pieces: the others' costs are remembered.
  const known = new Map<string, number>();
  const cost = (p: Piece): number => {
    const k = `${p.group}:${p.from}:${p.to}`;
    let c = known.get(k);
    if (c === undefined) known.set(k, (c = pieceCost(groups[p.group]!, p.from, p.to, perRow)));
    return c;
  };
  const costs = (ps: Piece[]) => ps.map(cost);
  // At most a few cuts per worker: each costs decompression.
  for (let round = 0; round < 2 * workers; round++) {
    const now = makespan(costs(pieces), workers);
    let best: Piece[] | null = null;
    let bestWall = now * (1 - MIN_GAIN);
    pieces.forEach((p, i) => {
      const g = groups[p.group]!;
      if (p.to - p.from < 2) return;
      for (let f = 0.3; f <= 0.851; f += 0.05) {
        const cut = p.from + Math.max(1, Math.min(p.to - p.from - 1, Math.round((p.to - p.from) * f)));
        const next = [...pieces.slice(0, i), { group: p.group, from: p.from, to: cut }, { group: p.group, from: cut, to: p.to }, ...pieces.slice(i + 1)];
        const wall = makespan(costs(next), workers);
        // Asked only of a cut that would be taken: the answer may read every page header of the group
        // (seconds on a 6 GB snappy file, with every worker waiting for its first task).
        if (wall < bestWall && g.splittable()) {
          bestWall = wall;
          best = next;
        }
      }
    });
    if (!best) break;
    pieces = best;
  }
  return pieces;
}
