// Text from the data on a terminal. Ids, repos, column names, file names found inside files and
// message contents can carry control characters, and a terminal obeys them: ESC ] 0 ; ... BEL
// retitles the window, ESC [ 2 J clears it, OSC 52 writes the clipboard, OSC 8 makes a link whose
// target differs from its text, C1 controls (U+009B is CSI) do the same without ESC, and bidi
// overrides reorder what is shown. Everything this program prints for a person goes through
// `neutralise` once, where it is written (the CLI's error handler, warnings and tables, progress,
// `show`, `check-template`); data outputs (JSONL or parquet files, `--out -`) keep their bytes.
// Pure and dependency-free, so every layer, the supervisor included, may use it.

// C0 except TAB (and LF, see `lines`), DEL, C1, and Unicode's bidi embedding, override and isolate
// controls (LRE RLE PDF LRO RLO, LRI RLI FSI PDI).
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_LF = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** The visible stand-in of one control character: its Control Picture (␛, ␇, ␍, ␡ ...), else U+FFFD. */
function picture(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return '\ufffd'; // C1 and bidi controls have no picture
}

/**
 * `text` with every control character a terminal acts on replaced by a visible symbol: C0 controls
 * (ESC, BEL, CR, backspace ...) by their Control Pictures (U+2400 + code), DEL by ␡, C1 controls
 * and bidi overrides by U+FFFD. TAB is kept; LF is kept only with `lines` (multi-line text such as
 * a table or a message body), else it becomes ␊, so that a value cannot start a line of its own.
 * Idempotent: the result contains none of the characters it replaces.
 */
export function neutralise(text: string, lines = false): string {
  const re = lines ? CONTROLS_BUT_LF : CONTROLS;
  re.lastIndex = 0;
  // The common case (nothing to replace) allocates nothing.
  if (!re.test(text)) return text;
  re.lastIndex = 0;
  return text.replace(re, picture);
}

/** Write the CLI's own messages (warnings, tables, summaries) to stderr, neutralised, lines kept. */
export function writeStderr(text: string): void {
  process.stderr.write(neutralise(text, true));
}
