// `prompt_tokens`, `chosen_tokens`, `rejected_tokens` of a trl row, counted as TRL's DPOTrainer
// counts them. Followed: huggingface/trl trl/trainer/dpo_trainer.py `_prepare_dataset` ->
// `tokenize_fn` (TRL 1.x) and trl/data_utils.py `_tokenize`:
//   prompt_ids          = apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=True)
//   prompt_chosen_ids   = apply_chat_template(prompt + chosen, tools=tools, tokenize=True)
//   chosen_ids          = prompt_chosen_ids[len(prompt_ids):]      (the same for rejected)
// (it logs "Mismatch between tokenized prompt and the start of tokenized prompt+chosen" when
// prompt_ids is not a prefix, and keeps the row). So prompt_tokens = len(prompt_ids) and
// chosen_tokens = max(0, len(prompt_chosen_ids) - len(prompt_ids)). `tools` is the row's column,
// JSON-decoded when a string (TRL: `json.loads(tools) if isinstance(tools, str)`). With
// `max_length`, the collator (DataCollatorForPreference, truncation_mode "keep_start") keeps the
// first max_length tokens of prompt+chosen and of prompt+rejected, and the trainer drops rows whose
// prompt alone has at least max_length tokens: a row is used whole iff
// prompt_tokens + max(chosen_tokens, rejected_tokens) <= max_length.
import { BuiltinRenderer, GENERATION_PROMPT, type PieceMessage } from './builtin-template.js';
import type { TokenCounter } from './counter.js';
import { parsePythonJson } from '../templates/python-json.js';

export interface RowTokens {
  prompt_tokens: number;
  chosen_tokens: number;
  rejected_tokens: number;
}

export interface TokenRow {
  prompt: readonly PieceMessage[];
  chosen: readonly PieceMessage[];
  rejected: readonly PieceMessage[];
  tools?: unknown;
}

/** Render messages with a chat template (any template: the Jinja path). */
export type RenderFn = (messages: readonly unknown[], tools: unknown[] | null, addGenerationPrompt: boolean) => string;

let lastTools: { key: string; value: unknown } | null = null;

/**
 * `tools` as the trainer passes it: JSON-decoded when a string (with Python's int and float types,
 * src/templates/python-json.ts; the last one is cached: rows share their tool list), null when
 * absent or empty.
 */
export function rowTools(row: TokenRow): { tools: unknown[] | null; key: string } {
  let v: unknown = row.tools ?? null;
  const key = typeof v === 'string' ? v : JSON.stringify(v);
  if (typeof v === 'string') {
    if (lastTools?.key !== v) lastTools = { key: v, value: parsePythonJson(v) };
    v = lastTools.value;
  }
  if (!Array.isArray(v) || v.length === 0) return { tools: null, key };
  return { tools: v, key };
}

/** Thrown when a row cannot be rendered (the template throws): its tokens cannot be counted. */
export class RenderFailure extends Error {}

/** How often the piecewise count is checked against encoding the whole Jinja render (rows 0, N, 2N, ...). */
const SELF_CHECK_EVERY = 4096;

export class RowTokenCounter {
  private readonly pieceCounts = new Map<string, number>();
  private pieceChars = 0;
  private rows = 0;
  /** Set when a self-check failed: every later row is rendered whole with Jinja. */
  private piecewiseOff = false;
  readonly warnings: string[] = [];

  /**
   * `builtin`: render with the built-in template piece by piece (fast path); else `render` renders
   * whole texts (any chat template).
   */
  constructor(
    readonly counter: TokenCounter,
    private readonly template: { builtin: BuiltinRenderer } | { render: RenderFn },
  ) {}

  private countPiece(piece: string): number {
    if (piece.length === 0) return 0;
    const hit = this.pieceCounts.get(piece);
    if (hit !== undefined) return hit;
    const n = this.counter.count(piece);
    this.pieceChars += piece.length;
    if (this.pieceChars > 64 * 1024 * 1024) {
      this.pieceCounts.clear();
      this.pieceChars = piece.length;
    }
    this.pieceCounts.set(piece, n);
    return n;
  }

  /** Sum of piece counts, or null when a boundary between two pieces is not at an added token. */
  private sumPieces(pieces: readonly string[], before = ''): number | null {
    let n = 0;
    let prev = before;
    for (const p of pieces) {
      if (p.length === 0) continue;
      if (prev !== '' && !this.counter.endsWithAddedToken(prev) && !this.counter.startsWithAddedToken(p)) return null;
      n += this.countPiece(p);
      prev = p;
    }
    return n;
  }

  private piecewise(row: TokenRow, tools: unknown[] | null, key: string, r: BuiltinRenderer): RowTokens | null {
    // The prompt's pieces once; prompt+completion reuses them and adds the completion's turns.
    const prompt = r.pieces(row.prompt, tools, key);
    if (!prompt || prompt.turns.length === 0) return null;
    const head = [prompt.header, ...prompt.turns.slice(0, -1)];
    const base = this.sumPieces(head);
    const beforeLast = head.findLast((x) => x.length > 0) ?? '';
    const lastTurn = prompt.turns[prompt.turns.length - 1]!;
    const rest = this.sumPieces([lastTurn, GENERATION_PROMPT], beforeLast);
    if (base === null || rest === null) return null;
    const p = base + rest;
    const withCompletion = (completion: readonly PieceMessage[]): number | null => {
      const all = [...row.prompt, ...completion];
      const n = row.prompt.length;
      const last = all[n - 1]!;
      // The last prompt turn renders differently only when it and the next message are tool results.
      const lastPiece = n - 1 >= prompt.skipped && last.role === 'tool' && completion[0]?.role === 'tool' ? r.turn(last, n - 2 >= prompt.skipped && all[n - 2]!.role === 'tool', true) : prompt.turns[prompt.turns.length - 1];
      const tail: string[] = [];
      for (let i = n; i < all.length; i++) {
        const t = r.turn(all[i]!, i - 1 >= prompt.skipped && all[i - 1]!.role === 'tool', i + 1 < all.length && all[i + 1]!.role === 'tool');
        if (t === null) return null;
        tail.push(t);
      }
      if (lastPiece === null || lastPiece === undefined) return null;
      const more = this.sumPieces([lastPiece, ...tail], beforeLast);
      return more === null ? null : base + more;
    };
    const c = withCompletion(row.chosen);
    const j = withCompletion(row.rejected);
    if (c === null || j === null) return null;
    return { prompt_tokens: p, chosen_tokens: Math.max(0, c - p), rejected_tokens: Math.max(0, j - p) };
  }

  private whole(row: TokenRow, tools: unknown[] | null, render: RenderFn, exact: boolean): RowTokens {
    let texts: string[];
    try {
      texts = [render(row.prompt, tools, true), render([...row.prompt, ...row.chosen], tools, false), render([...row.prompt, ...row.rejected], tools, false)];
    } catch (e) {
      throw new RenderFailure((e as Error).message);
    }
    const count = (s: string): number => (exact ? this.counter.tokenizer.encode(s, { add_special_tokens: false }).ids.length : this.counter.count(s));
    const [p, c, j] = texts.map(count) as [number, number, number];
    return { prompt_tokens: p, chosen_tokens: Math.max(0, c - p), rejected_tokens: Math.max(0, j - p) };
  }

  private jinjaRender(): RenderFn {
    if ('render' in this.template) return this.template.render;
    const tpl = this.template.builtin.template;
    return (messages, tools, gen) => tpl.render({ messages: messages as unknown[], tools, documents: null, add_generation_prompt: gen });
  }

  /** The row's token counts; throws RenderFailure when the template cannot render it. */
  count(row: TokenRow): RowTokens {
    const { tools, key } = rowTools(row);
    const n = this.rows++;
    if ('builtin' in this.template && !this.piecewiseOff) {
      let fast: RowTokens | null;
      try {
        fast = this.piecewise(row, tools, key, this.template.builtin);
      } catch (e) {
        throw new RenderFailure((e as Error).message); // a value the template's show_value cannot render
      }
      if (fast !== null) {
        if (n % SELF_CHECK_EVERY === 0) {
          // The piece decomposition against the whole Jinja render (its count per section is exact, counter.ts).
          const exact = this.whole(row, tools, this.jinjaRender(), false);
          if (exact.prompt_tokens !== fast.prompt_tokens || exact.chosen_tokens !== fast.chosen_tokens || exact.rejected_tokens !== fast.rejected_tokens) {
            this.piecewiseOff = true;
            this.warnings.push(
              `piecewise token counts differ from encoding the whole render on row ${n + 1} (${JSON.stringify(fast)} vs ${JSON.stringify(exact)}); every row is now counted whole (slower)`,
            );
            return exact;
          }
        }
        return fast;
      }
    }
    return this.whole(row, tools, this.jinjaRender(), false);
  }
}
