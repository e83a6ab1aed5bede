// The spill store: normalised messages of extracted trajectories are written to disk as they are
// decoded, so that memory holds only 16-byte key hashes and offsets per message, whatever the input
// size. Rows are rebuilt from the spill when the walk emits them.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const FLUSH_BYTES = 1 << 20;

export class SpillWriter {
  private readonly fd: number;
  private pos = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'a');
  }

  /** Append `s` (UTF-8); returns its end offset. Its start is the previous end. */
  append(s: string): number {
    if (s.length === 0) return this.pos;
    const b = Buffer.from(s, 'utf8');
    this.pending.push(b);
    this.pendingBytes += b.length;
    this.pos += b.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    return this.pos;
  }

  get offset(): number {
    return this.pos;
  }

  flush(): void {
    if (this.pendingBytes === 0) return;
    const b = Buffer.concat(this.pending, this.pendingBytes);
    let written = 0;
    while (written < b.length) written += writeSync(this.fd, b, written, b.length - written);
    this.pending = [];
    this.pendingBytes = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

export class SpillReader {
  private readonly fds = new Map<string, number>();

  read(path: string, start: number, end: number): string {
    if (end <= start) return '';
    let fd = this.fds.get(path);
    if (fd === undefined) this.fds.set(path, (fd = openSync(path, 'r')));
    const b = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < b.length) {
      const n = readSync(fd, b, got, b.length - got, start + got);
      if (n === 0) throw new Error(`spill file ${path} is shorter than expected`);
      got += n;
    }
    return b.toString('utf8');
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}
