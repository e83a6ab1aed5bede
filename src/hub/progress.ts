// Download progress on stderr, in the style of io/progress.ts: a live line on a TTY (bytes, rate, ETA),
// a plain line every 5 s otherwise, nothing with --quiet.
import { duration, humanBytes } from '../io/progress.js';
import { neutralise } from '../io/terminal-text.js';

export { humanBytes };

export interface ByteProgress {
  start(label: string, files: number, bytes: number): void;
  /** `n` more bytes arrived (negative when a restart throws bytes away). */
  add(n: number): void;
  fileDone(): void;
  done(): void;
  /** A line of its own (a retry, a wait on a lock), without breaking the live line. */
  note(line: string): void;
}

export const silentBytes: ByteProgress = { start() {}, add() {}, fileDone() {}, done() {}, note() {} };

export class StderrBytes implements ByteProgress {
  private label = '';
  private files = 0;
  private filesDone = 0;
  private total = 0;
  private bytes = 0;
  private started = 0;
  private lastDraw = 0;
  private active = false;
  private readonly tty: boolean;
  private readonly interval: number;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(stream.isTTY);
    this.interval = this.tty ? 100 : 5000;
  }

  start(label: string, files: number, bytes: number): void {
    Object.assign(this, { label, files, total: bytes, filesDone: 0, bytes: 0, started: Date.now(), lastDraw: 0, active: true });
    this.draw(true);
  }

  add(n: number): void {
    this.bytes += n;
    this.draw(false);
  }

  fileDone(): void {
    this.filesDone++;
    this.draw(false);
  }

  done(): void {
    if (!this.active) return;
    this.draw(true);
    if (this.tty) this.stream.write('\n');
    this.active = false;
  }

  note(line: string): void {
    if (this.tty && this.active) this.stream.write('\r\x1b[2K');
    // Notes name datasets and files of the Hub: data, neutralised for the terminal (io/terminal-text.ts).
    this.stream.write(`divergence-mine: ${neutralise(line)}\n`);
    if (this.active && this.tty) this.draw(true);
  }

  private line(): string {
    const secs = (Date.now() - this.started) / 1000;
    const rate = secs > 0 ? this.bytes / secs : 0;
    const frac = this.total > 0 ? Math.min(1, this.bytes / this.total) : 1;
    const eta = rate > 0 ? (this.total - this.bytes) / rate : Infinity;
    const width = 20;
    const filled = Math.round(frac * width);
    const bar = this.tty ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` : '';
    return (
      `${this.label}: ${bar}${Math.floor(frac * 100)}% ${humanBytes(this.bytes)}/${humanBytes(this.total)}, ` +
      `${this.filesDone}/${this.files} files, ${humanBytes(Math.round(rate))}/s, elapsed ${duration(secs)}, ETA ${frac >= 1 ? '0s' : duration(eta)}`
    );
  }

  private draw(force: boolean): void {
    if (!this.active) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < this.interval) return;
    this.lastDraw = now;
    const line = neutralise(this.line()); // the label names the dataset
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(`${line}\n`);
  }
}
