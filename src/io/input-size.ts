// How big an input is, where a run decides by size before it reads anything. Kept to node:fs alone:
// the supervisor imports it (supervisor.ts), and every run pays for what the supervisor loads.
import { statSync } from 'node:fs';

/**
 * Inputs of this size and more, in all, have work for every decode worker: the run starts them all
 * with the footers. Under it, a `mine` without --workers uses one (engine/mine-pairs.ts poolSize): a
 * worker takes 80-150 ms to start (its own isolate and modules), in which one worker decodes several
 * MiB (the 5,000-row twin: about 70 MB/s); and the supervisor then gives none of the V8 flags of a
 * run whose workers take every core (supervisor.ts childV8Flags).
 */
export const SMALL_INPUT_BYTES = 16 * 2 ** 20;

/** The size of a regular file at `path`; null for anything else (a folder, a glob, a Hub name, nothing). */
export function regularFileSize(path: string): number | null {
  try {
    const s = statSync(path);
    return s.isFile() ? s.size : null;
  } catch {
    return null;
  }
}
