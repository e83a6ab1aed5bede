// Record assembly (Dremel): rebuild nested values from each leaf's (repetition, definition, value)
// triples. Each leaf is first shaped on its own (arrays for lists, a depth-tagged null marker where
// a node is null), then the shapes of a struct's leaves are zipped into objects. Values come out as
// the Arrow path builds them (arrow-values.ts): objects with every field in schema order, arrays,
// null for nulls.
import type { RowTriples } from './column.js';
import type { LogicalNode } from './meta.js';
import { ParquetFormatError } from './thrift.js';

/** "The node at this depth is null." One marker per depth, compared by identity. */
class Null {
  constructor(readonly depth: number) {}
}
const NULLS: Null[] = [];
function nullAt(depth: number): Null {
  return (NULLS[depth] ??= new Null(depth));
}

/** The list node (index in `nodes`) that owns each repetition level. */
export function listLevels(nodes: readonly LogicalNode[]): number[] {
  const listAt: number[] = [];
  nodes.forEach((n, i) => {
    if (n.kind === 'list') listAt[n.rep] = i;
  });
  return listAt;
}

/** One leaf's shape for one row, from its triples [start, end). `nodes`: the leaf's path of logical nodes. */
export function shapeLeaf(
  nodes: readonly LogicalNode[],
  reps: readonly number[],
  defs: readonly number[],
  vals: readonly unknown[],
  start: number,
  end: number,
  listAt: readonly number[] = listLevels(nodes),
): unknown {
  if (end <= start) throw new ParquetFormatError('a row without values');
  const open: unknown[][] = [];
  const valueAt = (j: number, d: number, v: unknown): unknown => {
    const n = nodes[j]!;
    if (d < n.def) return nullAt(j);
    return present(j, d, v);
  };
  const present = (i: number, d: number, v: unknown): unknown => {
    const n = nodes[i]!;
    switch (n.kind) {
      case 'leaf':
        return v;
      case 'struct':
        return valueAt(i + 1, d, v);
      case 'list': {
        const arr: unknown[] = [];
        open[n.rep] = arr;
        if (d >= n.elemDef) arr.push(valueAt(i + 1, d, v));
        return arr;
      }
    }
  };
  if (reps[start] !== 0) throw new ParquetFormatError('a row starts with a repetition');
  const root = valueAt(0, defs[start]!, vals[start]);
  for (let k = start + 1; k < end; k++) {
    const r = reps[k]!;
    const i = listAt[r];
    const arr = open[r];
    if (i === undefined || arr === undefined) throw new ParquetFormatError(`repetition level ${r} without an open list`);
    const d = defs[k]!;
    const owner = nodes[i]!;
    if (owner.kind !== 'list' || d < owner.elemDef) throw new ParquetFormatError('a repeated element that is not defined');
    arr.push(valueAt(i + 1, d, vals[k]));
  }
  return root;
}

/** Zip the shapes of `node`'s leaves (in leaf order) at depth `depth` into the node's value. */
export function merge(node: LogicalNode, depth: number, shapes: readonly unknown[]): unknown {
  return mergeAt(node, depth, shapes, 0, shapes.length);
}

/** merge of the node whose leaves' shapes are `shapes[from..to)` (no slice per struct field). */
function mergeAt(node: LogicalNode, depth: number, shapes: readonly unknown[], from: number, to: number): unknown {
  const s0 = shapes[from];
  // A struct passes its fields' shapes through, so a deeper marker belongs to a field.
  const isNull = s0 instanceof Null && s0.depth <= depth;
  // Every leaf below this node must say the same of it: one leaf's null struct against another's
  // value is a corrupt file (readers that believe one leaf or the other build different rows).
  for (let k = from + 1; k < to; k++) {
    const s = shapes[k];
    if ((s instanceof Null && s.depth <= depth) !== isNull) throw new ParquetFormatError('leaves disagree on a null');
  }
  if (isNull) return null;
  switch (node.kind) {
    case 'leaf':
      if (s0 instanceof Null) throw new ParquetFormatError('a null marker below a leaf');
      return s0;
    case 'list': {
      const n = (s0 as unknown[]).length;
      for (let k = from; k < to; k++) {
        const a = shapes[k];
        if (!Array.isArray(a) || a.length !== n) throw new ParquetFormatError('leaves disagree on a list length');
      }
      const out = new Array<unknown>(n);
      const width = to - from;
      // The element's shapes, one per leaf: a fresh array per element (mergeAt may keep none of it,
      // but a leaf's own shape is returned as is).
      for (let e = 0; e < n; e++) {
        const item = new Array<unknown>(width);
        for (let k = 0; k < width; k++) item[k] = (shapes[from + k] as unknown[])[e];
        out[e] = mergeAt(node.item, depth + 1, item, 0, width);
      }
      return out;
    }
    case 'struct': {
      const o: Record<string, unknown> = {};
      let at = from;
      for (const f of node.fields) {
        const k = leafCount(f);
        o[f.name] = mergeAt(f, depth + 1, shapes, at, at + k);
        at += k;
      }
      return o;
    }
  }
}

const counts = new WeakMap<LogicalNode, number>();
export function leafCount(n: LogicalNode): number {
  let c = counts.get(n);
  if (c === undefined) {
    c = n.kind === 'leaf' ? 1 : n.kind === 'list' ? leafCount(n.item) : n.fields.reduce((s, f) => s + leafCount(f), 0);
    counts.set(n, c);
  }
  return c;
}

/** One row of a top-level column from its leaves' triples for that row. */
export function assembleRow(node: LogicalNode, leafNodes: readonly (readonly LogicalNode[])[], rows: readonly RowTriples[], listAt: readonly (readonly number[])[]): unknown {
  // A column that is one leaf outside any list (ids, labels): its row's one entry is the value or
  // null, without shaping and merging (the index pass reads millions of these).
  if (node.kind === 'leaf' && rows.length === 1) {
    const t = rows[0]!;
    if (t.reps.length === 1 && t.reps[0] === 0) return t.defs[0]! < node.def ? null : t.vals[0];
  }
  const shapes = rows.map((t, j) => shapeLeaf(leafNodes[j]!, t.reps, t.defs, t.vals, 0, t.reps.length, listAt[j]));
  return merge(node, 0, shapes);
}
