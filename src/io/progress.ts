// Progress on stderr: a live line on a TTY, a plain line every few seconds otherwise, nothing with --quiet.
// Kept by hand: one redrawn line is all it does, and bar libraries (cli-progress, ...) would add a
// dependency whose non-TTY output is not the plain periodic line that CI logs and `2>log` want.
import { neutralise, writeStderr } from './terminal-text.js';
import { formatCount } from '../count-text.js';

export interface ProgressSink {
  phase(name: string, totalUnits: number, totalRows: number): void;
  advance(units: number, rows: number): void;
  done(): void;
  /** A whole line (a warning) for stderr in the middle of a run: the progress line is redrawn below it. */
  note(line: string): void;
}

/** No progress; notes still reach stderr (a quiet run prints warnings). */
export const silentProgress: ProgressSink = {
  phase() {},
  advance() {},
  done() {},
  note(line) {
    writeStderr(line);
  },
};

/** 59.9 kB, 2.08 GB: sizes as the counters table and the download line print them. */
export function humanBytes(n: number): string {
  if (n < 1e3) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

export function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${s.toFixed(0)}s`;
}

export class StderrProgress implements ProgressSink {
  private name = '';
  private totalUnits = 0;
  private totalRows = 0;
  private units = 0;
  private rows = 0;
  private started = 0;
  private lastDraw = 0;
  private readonly tty: boolean;
  private readonly interval: number;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly unitName = 'row groups',
  ) {
    this.tty = Boolean(stream.isTTY);
    this.interval = this.tty ? 100 : 5000;
  }

  phase(name: string, totalUnits: number, totalRows: number): void {
    this.finishLine();
    Object.assign(this, { name, totalUnits, totalRows, units: 0, rows: 0, started: Date.now(), lastDraw: 0 });
    this.draw(true);
  }

  advance(units: number, rows: number): void {
    this.units += units;
    this.rows += rows;
    this.draw(false);
  }

  done(): void {
    this.draw(true);
    this.finishLine();
  }

  note(line: string): void {
    const text = neutralise(line.endsWith('\n') ? line.slice(0, -1) : line, true);
    if (this.tty && this.name) {
      this.stream.write(`\r\x1b[2K${text}\n`);
      this.draw(true);
    } else this.stream.write(`${text}\n`);
  }

  private line(): string {
    const secs = (Date.now() - this.started) / 1000;
    const rate = secs > 0 ? this.rows / secs : 0;
    const frac = this.totalRows > 0 ? this.rows / this.totalRows : this.totalUnits > 0 ? this.units / this.totalUnits : 1;
    const eta = frac > 0 ? (secs / frac) * (1 - frac) : Infinity;
    const pct = Math.floor(frac * 100);
    const width = 20;
    const filled = Math.round(frac * width);
    const bar = this.tty ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` : '';
    return (
      `${this.name}: ${bar}${pct}% ${formatCount(this.rows)}${this.totalRows > 0 ? `/${formatCount(this.totalRows)}` : ''} rows, ` +
      `${this.units}/${this.totalUnits} ${this.unitName}, ${formatCount(Math.round(rate))} rows/s, ` +
      `elapsed ${duration(secs)}, ETA ${frac >= 1 ? '0s' : duration(eta)}`
    );
  }

  private draw(force: boolean): void {
    const now = Date.now();
    if (!force && now - this.lastDraw < this.interval) return;
    if (!this.tty && force && this.units > 0 && this.units < this.totalUnits) return;
    this.lastDraw = now;
    // "\r" + EL (erase line): the one escape a redrawn line needs, written in the same write as the
    // line; the line itself (a phase may name a file) carries none (terminal-text.ts).
    const line = neutralise(this.line());
    if (this.tty) this.stream.write(`\r\x1b[2K${line}`);
    else this.stream.write(`${line}\n`);
  }

  private finishLine(): void {
    if (this.tty && this.name) this.stream.write('\n');
    this.name = '';
  }
}
