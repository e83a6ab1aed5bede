// What a run needs to know about a file before reading it (the `meta` task's answer): row counts
// and, per top-level column, its type and the three kinds of column the miner asks for.
export interface FieldInfo {
  /** Top-level column name. */
  name: string;
  type: string;
  isString: boolean;
  isLabel: boolean;
  isTrajectory: boolean;
}

export interface MetaResult {
  numRows: number;
  rowGroupRows: number[];
  fields: FieldInfo[];
}
