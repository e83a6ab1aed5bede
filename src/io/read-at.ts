// Reading a given number of bytes at a file position: readSync may return fewer than asked (a pipe,
// a network file system, a signal), so the callers that need them all loop until they have them.
import { readSync } from 'node:fs';

/**
 * Reads `length` bytes at file `position` of `fd` into `buf` from `at`; returns how many it got,
 * fewer only at the end of the file (what that means is the caller's to say).
 */
export function readAt(fd: number, buf: Uint8Array, at: number, length: number, position: number): number {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, at + got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}
