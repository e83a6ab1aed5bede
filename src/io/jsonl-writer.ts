// JSONL output: one JSON object per line, to a file (atomically) or to stdout (EPIPE tolerated).
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { commitTemp, openTempFor, removeTemp } from './atomic.js';
import type { RowSink } from './sink.js';
import { stringifyKeepingNumbers } from '../contract/json-numbers.js';

/** Set when a stdout consumer went away (e.g. `| head`): the run stops quietly. */
export class BrokenPipe extends Error {}

/**
 * Wait until `out` can take more (drain), or is gone (close / error). Unlike `events.once`, an
 * 'error' (EPIPE) resolves instead of rejecting, and no listener is left behind on any path.
 */
function writable(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', done);
  });
}

export class JsonlSink<R = unknown> implements RowSink<R> {
  private readonly out: NodeJS.WritableStream;
  private readonly tmp: string | null;
  private broken = false;
  private failure: Error | null = null;
  bytes = 0;

  constructor(private readonly path: string) {
    if (path === '-') {
      this.tmp = null;
      this.out = process.stdout;
    } else {
      // Opened synchronously, so the temporary file exists before anything can fail and abort()
      // never races an open still in flight (which would leave the file behind).
      const { tmp, fd } = openTempFor(path);
      this.tmp = tmp;
      this.out = createWriteStream(tmp, { fd });
    }
    this.out.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') this.broken = true;
      else this.failure = e;
    });
  }

  async write(row: R): Promise<void> {
    // Argument values may hold LosslessNumbers (json-numbers.ts): written as their source text.
    return this.writeLine(stringifyKeepingNumbers(row)!);
  }

  /** Write one already-serialised row (merge copies lines byte for byte). */
  async writeLine(json: string): Promise<void> {
    // One UTF-8 conversion: the stream would encode the string anyway, and the size falls out.
    return this.writeBytes(Buffer.from(json + '\n', 'utf8'));
  }

  /** Write whole lines already encoded as UTF-8 (each ending in \n). */
  async writeBytes(bytes: Uint8Array): Promise<void> {
    if (this.broken) throw new BrokenPipe();
    if (this.failure) throw this.failure;
    this.bytes += bytes.length;
    if (!this.out.write(bytes)) {
      await writable(this.out);
      if (this.broken) throw new BrokenPipe();
      if (this.failure) throw this.failure;
    }
  }

  /**
   * writeBytes, resolved once the stream is done with `bytes`: the caller may then reuse them (a
   * large copy goes through one buffer instead of a fresh one per write).
   */
  async writeBytesReusing(bytes: Uint8Array): Promise<void> {
    if (this.broken) throw new BrokenPipe();
    if (this.failure) throw this.failure;
    this.bytes += bytes.length;
    const err = await new Promise<NodeJS.ErrnoException | null | undefined>((resolve) => this.out.write(bytes, resolve));
    // The callback comes before the stream's 'error' event: take the error from it.
    if (err?.code === 'EPIPE') this.broken = true;
    else if (err) this.failure ??= err;
    if (this.broken) throw new BrokenPipe();
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    if (this.tmp === null) {
      if (this.broken) return;
      await new Promise<void>((res) => (this.out as NodeJS.WritableStream).write('', () => res()));
      return;
    }
    const ws = this.out as WriteStream;
    ws.end();
    await once(ws, 'close');
    if (this.failure) throw this.failure;
    commitTemp(this.tmp, this.path);
  }

  abort(): void {
    if (this.tmp === null) return;
    (this.out as WriteStream).destroy();
    removeTemp(this.tmp);
  }
}
