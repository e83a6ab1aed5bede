// Where rows go. Each writer writes to a temporary file and only `close()` makes it visible.
export interface RowSink<R = unknown> {
  write(row: R): Promise<void>;
  /** Finish and move the output into place. */
  close(): Promise<void>;
  /** Drop everything written so far (error or interrupt). */
  abort(): void;
  /** Bytes written so far (for shard balancing and reports). */
  readonly bytes: number;
}
