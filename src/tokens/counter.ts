// Token counts and ids of rendered chat text, exactly as `tokenizer.encode(text,
// {add_special_tokens: false}).ids` of @huggingface/tokenizers (what transformers'
// `apply_chat_template(tokenize=True)` does: the template writes the special tokens itself), but
// fast on the long, repetitive texts of agent trajectories.
//
// Why the shortcuts are exact (they follow the library's own `encode_text`):
// 1. The text is first cut at added tokens (<|im_start|>, <|im_end|>, <tool_call>, ...); each
//    section between them is normalised, pre-tokenised and run through the model on its own. So a
//    text's ids are the concatenation of its sections' ids, when no added token strips the
//    whitespace of its neighbours (lstrip/rstrip): then we fall back to encoding the whole text.
// 2. Within a section, the model (BPE) maps every pre-token to tokens on its own (unless the model
//    fuses unknown tokens, `fuse_unk`): a section's count is the sum over its pre-tokens. For the
//    Qwen/Llama-3 layout (`Sequence[Split(regex), ByteLevel(use_regex: false)]`) the byte-level
//    stage maps one piece to one piece, so the count is cached per piece before it.
// Sections and pieces are memoised (bounded, two generations), so a prompt message repeated across
// the pairs of an instance, and the prompt inside prompt+chosen, are counted once.
// test/tokens-count.test.ts checks both against whole-text `encode` on real rows.
import type { Tokenizer } from '@huggingface/tokenizers';

interface AddedTokenLike {
  content: string;
  id: number;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
}

/** The parts of the library's Tokenizer that `encode_text` uses (not in its public types). */
interface TokenizerInternals {
  splitter_unnormalized: { split(text: string): string[] };
  added_tokens: AddedTokenLike[];
  added_tokens_map: Map<string, AddedTokenLike>;
  normalizer: ((text: string) => string) | null;
  pre_tokenizer: (((text: string | string[], options?: unknown) => string[]) & { tokenizers?: PreTokenizerStage[]; config?: { type?: string } }) | null;
  model: ((tokens: string[]) => string[]) & { fuse_unk?: boolean };
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}

interface PreTokenizerStage {
  pre_tokenize(text: string | string[], options?: unknown): string[];
  pre_tokenize_text(text: string, options?: unknown): string[];
  config?: { type?: string; use_regex?: boolean; add_prefix_space?: boolean; behavior?: string; invert?: boolean };
  pattern?: RegExp | null;
  use_regex?: boolean;
  add_prefix_space?: boolean;
}

/** A Map in two generations: when the current one holds `limit` units, it becomes the old one. */
class TwoGenerationCache<V> {
  private current = new Map<string, V>();
  private old = new Map<string, V>();
  private used = 0;
  constructor(
    private readonly limit: number,
    private readonly cost: (key: string) => number,
  ) {}
  get(key: string): V | undefined {
    const v = this.current.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }
  set(key: string, v: V): void {
    this.used += this.cost(key);
    if (this.used > this.limit) {
      this.old = this.current;
      this.current = new Map();
      this.used = this.cost(key);
    }
    this.current.set(key, v);
  }
}

export class TokenCounter {
  private readonly t: TokenizerInternals;
  /** Sections can be encoded one by one (no added token strips its neighbours). */
  readonly sectionwise: boolean;
  /** Sections can be counted per piece before the byte-level stage (see the top of the file). */
  readonly piecewise: boolean;
  private readonly stages: PreTokenizerStage[] = [];
  private readonly byteLevel: PreTokenizerStage | null = null;
  /** The one Split stage's regex when it isolates its matches (the library's `regex_split`), else null. */
  private readonly isolate: RegExp | null = null;
  private readonly sectionCounts = new TwoGenerationCache<number>(32 * 1024 * 1024, (k) => k.length + 64);
  private readonly sectionIds = new TwoGenerationCache<number[]>(16 * 1024 * 1024, (k) => 2 * k.length + 64);
  // One Map, emptied when full: most lookups are of short pieces, and one lookup per piece is the cost that matters.
  private pieceCounts = new Map<string, number>();
  private pieceChars = 0;
  /** Added-token texts, for `startsWithAddedToken` / `endsWithAddedToken`. */
  readonly addedTexts: string[];

  constructor(readonly tokenizer: Tokenizer) {
    this.t = tokenizer as unknown as TokenizerInternals;
    const t = this.t;
    const added = t.added_tokens ?? [];
    this.addedTexts = added.map((a) => a.content).filter((s) => s.length > 0);
    this.sectionwise =
      typeof t.splitter_unnormalized?.split === 'function' && added.every((a) => !a.lstrip && !a.rstrip) && !t.remove_space && !t.do_lowercase_and_remove_accent;
    let piecewise = false;
    const pre = t.pre_tokenizer;
    const normalizedAdded = added.some((a) => a.normalized) && t.normalizer !== null;
    if (this.sectionwise && !normalizedAdded && !t.model.fuse_unk && pre?.tokenizers && pre.tokenizers.length >= 2) {
      const last = pre.tokenizers[pre.tokenizers.length - 1]!;
      const isByteLevel = last.config?.type === 'ByteLevel';
      if (isByteLevel && last.use_regex === false && !last.add_prefix_space) {
        this.stages = pre.tokenizers.slice(0, -1);
        this.byteLevel = last;
        piecewise = true;
        const only = this.stages.length === 1 ? this.stages[0]! : null;
        if (only?.config?.type === 'Split' && only.config.invert === false && only.config.behavior?.toLowerCase() === 'isolated' && only.pattern instanceof RegExp && only.pattern.global)
          this.isolate = only.pattern;
      }
    }
    this.piecewise = piecewise;
  }

  /** Token ids of `text` (= tokenizer.encode(text, {add_special_tokens: false}).ids). */
  encode(text: string): number[] {
    if (!this.sectionwise) return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    const out: number[] = [];
    for (const section of this.t.splitter_unnormalized.split(text)) {
      if (section.length === 0) continue;
      const added = this.t.added_tokens_map.get(section);
      if (added) {
        out.push(added.id);
        continue;
      }
      let ids = this.sectionIds.get(section);
      if (ids === undefined) {
        ids = this.tokenizer.encode(section, { add_special_tokens: false }).ids as number[];
        this.sectionIds.set(section, ids);
      }
      for (const id of ids!) out.push(id);
    }
    return out;
  }

  /** Number of tokens of `text` (= encode(text).length). */
  count(text: string): number {
    if (!this.sectionwise) return this.tokenizer.encode(text, { add_special_tokens: false }).ids.length;
    let n = 0;
    for (const section of this.t.splitter_unnormalized.split(text)) {
      if (section.length === 0) continue;
      if (this.t.added_tokens_map.has(section)) n++;
      else n += this.countSection(section);
    }
    return n;
  }

  private countSection(section: string): number {
    const hit = this.sectionCounts.get(section);
    if (hit !== undefined) return hit;
    let n: number;
    if (this.piecewise) {
      const normalized = this.t.normalizer ? this.t.normalizer(section) : section;
      n = 0;
      if (this.isolate) {
        // The library's regex_split (Split, behavior "Isolated"): the matches and the text between them, in order.
        let prev = 0;
        for (const m of normalized.matchAll(this.isolate)) {
          if (prev < m.index) n += this.countPiece(normalized.slice(prev, m.index));
          n += this.countPiece(m[0]);
          prev = m.index + m[0].length;
        }
        if (prev < normalized.length) n += this.countPiece(normalized.slice(prev));
      } else {
        let pieces: string[] = [normalized];
        for (const s of this.stages) pieces = s.pre_tokenize(pieces);
        for (const p of pieces) n += this.countPiece(p);
      }
    } else {
      n = this.tokenizer.encode(section, { add_special_tokens: false }).ids.length;
    }
    this.sectionCounts.set(section, n);
    return n;
  }

  private countPiece(piece: string): number {
    if (piece.length === 0) return 0;
    // Long pieces too: the library's BPE caches only pieces under 256 characters, and long runs
    // (separator lines, indentation, base64) recur across rows and are slow to merge.
    const hit = this.pieceCounts.get(piece);
    if (hit !== undefined) return hit;
    const n = this.t.model(this.byteLevel!.pre_tokenize_text(piece)).length;
    this.pieceChars += piece.length + 32;
    if (this.pieceChars > 32 * 1024 * 1024) {
      this.pieceCounts = new Map();
      this.pieceChars = piece.length + 32;
    }
    this.pieceCounts.set(piece, n);
    return n;
  }

  /** Whether `text` starts with an added token (a token boundary before it in any context). */
  startsWithAddedToken(text: string): boolean {
    for (const a of this.addedTexts) if (text.startsWith(a)) return true;
    return false;
  }

  endsWithAddedToken(text: string): boolean {
    for (const a of this.addedTexts) if (text.endsWith(a)) return true;
    return false;
  }

  /** The token text of an id (for messages), or `#id`. */
  tokenText(id: number): string {
    const added = [...this.t.added_tokens].find((a) => a.id === id);
    if (added) return added.content;
    try {
      return this.tokenizer.decode([id], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
    } catch {
      return `#${id}`;
    }
  }
}
