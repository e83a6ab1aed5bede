// Which files a dataset name means, by the rules of the `datasets` library (5.x): the README's
// `configs:` front matter (utils/metadata.py MetadataConfigs, load.py create_builder_configs_from_metadata_configs),
// else its default data-file patterns (data_files.py get_data_patterns), each pattern resolved as
// resolve_pattern does (fsspec glob; hidden files, `__*` folders and README.md / dataset_info files left
// out unless named), and the file format inferred from the most common extension (load.py
// infer_module_for_data_files_list). Pure: a listing and a README in, file paths out.
import { parse as parseYaml } from 'yaml';
import { ExitCode, UserError } from '../errors.js';
import { codePointCompare } from './cache.js';
import { globToRegExp, hasMagic, repoPathProblem } from './names.js';

// --- the front matter --------------------------------------------------------------------------

/** huggingface_hub's REGEX_YAML_BLOCK (repocard.py). */
const YAML_BLOCK = /^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))/;

export interface ConfigSpec {
  config_name: string;
  data_files?: unknown;
  data_dir?: string;
  default?: unknown;
}

/** The README's `configs:` list (empty when there is none). YAML 1.1, as PyYAML's safe_load reads it. */
export function cardConfigs(readme: string | null, where: string): ConfigSpec[] {
  if (readme === null) return [];
  const m = YAML_BLOCK.exec(readme);
  if (!m) return [];
  let data: unknown;
  try {
    data = parseYaml(m[2]!, { version: '1.1', maxAliasCount: 100 });
  } catch (e) {
    throw new UserError(`${where}: the front matter of README.md is not valid YAML (${(e as Error).message.split('\n')[0]})`, ExitCode.corrupt);
  }
  if (data === null || data === undefined) return [];
  if (typeof data !== 'object' || Array.isArray(data)) throw new UserError(`${where}: the front matter of README.md is not a mapping`, ExitCode.corrupt);
  const configs = (data as Record<string, unknown>).configs;
  if (configs === undefined || configs === null || configs === false) return [];
  if (!Array.isArray(configs)) throw new UserError(`${where}: README.md: configs must be a list`, ExitCode.corrupt);
  for (const c of configs) {
    if (typeof c !== 'object' || c === null || !('config_name' in c)) throw new UserError(`${where}: README.md: every config needs a config_name`, ExitCode.corrupt);
    checkDataFilesField((c as ConfigSpec).data_files, where);
    const dir = (c as ConfigSpec).data_dir;
    if (dir !== undefined && dir !== null && (typeof dir !== 'string' || repoPathProblem(dir.replace(/\/+$/, '')) !== null))
      throw new UserError(`${where}: README.md: data_dir ${JSON.stringify(dir)} is not a relative folder of the repo`, ExitCode.corrupt);
  }
  return (configs as ConfigSpec[]).map((c) => ({ ...c, config_name: String(c.config_name) }));
}

const SPLIT_NAME = /^\w+(\.\w+)*$/u;

/** MetadataConfigs._raise_if_data_files_field_not_valid. */
function checkDataFilesField(v: unknown, where: string): void {
  if (v === undefined || v === null) return;
  const ok =
    typeof v === 'string' ||
    (Array.isArray(v) &&
      v.every(
        (item) =>
          typeof item === 'string' ||
          (typeof item === 'object' &&
            item !== null &&
            Object.keys(item).length === 2 &&
            typeof (item as { split?: unknown }).split === 'string' &&
            SPLIT_NAME.test((item as { split: string }).split) &&
            (typeof (item as { path?: unknown }).path === 'string' || Array.isArray((item as { path?: unknown }).path))),
      ));
  if (!ok) throw new UserError(`${where}: README.md: data_files must be a string, a list of strings, or a list of {split, path}`, ExitCode.corrupt);
}

/** MetadataConfigs.get_default_config_name: the only one, the one named `default`, or the one with `default: true`. */
export function defaultConfigName(configs: readonly ConfigSpec[], where: string): string | null {
  let found: string | null = null;
  for (const c of configs) {
    if (configs.length === 1 || c.config_name === 'default' || c.default === true) {
      if (found !== null) throw new UserError(`${where}: README.md has several default configs: ${found} and ${c.config_name}`, ExitCode.corrupt);
      found = c.config_name;
    }
  }
  return found;
}

/** sanitize_patterns: split -> patterns. */
export function sanitizePatterns(v: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const list = (x: unknown): string[] => (Array.isArray(x) ? x.map(String) : [String(x)]);
  if (typeof v === 'string') out.set('train', [v]);
  else if (Array.isArray(v)) {
    if (v.some((p) => typeof p === 'object' && p !== null)) {
      for (const p of v as { split: string; path: unknown }[]) {
        if (out.has(String(p.split))) throw new UserError(`README.md: split ${p.split} is given twice in data_files`, ExitCode.corrupt);
        out.set(String(p.split), list(p.path));
      }
    } else out.set('train', list(v));
  }
  return out;
}

// --- default patterns (data_files.py, fsspec >= 2023.12) ---------------------------------------

export const SHARDED_PATTERN = 'data/{split}-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]*.*';
const SPLIT_KEYWORDS: [string, string[]][] = [
  ['train', ['train', 'training']],
  ['validation', ['validation', 'valid', 'dev', 'val']],
  ['test', ['test', 'testing', 'eval', 'evaluation']],
];
const SEP = '-._ 0-9';
const FILENAME_BASES = ['**/{keyword}[{sep}]*', '**/*[{sep}]{keyword}[{sep}]*'];
const DIRNAME_BASES = ['**/{keyword}/**', '**/{keyword}[{sep}]*/**', '**/*[{sep}]{keyword}/**', '**/*[{sep}]{keyword}[{sep}]*/**'];

function keywordPatterns(bases: string[]): Map<string, string[]> {
  return new Map(SPLIT_KEYWORDS.map(([split, kws]) => [split, kws.flatMap((kw) => bases.map((b) => b.replaceAll('{keyword}', kw).replaceAll('{sep}', SEP)))]));
}

/** ALL_DEFAULT_PATTERNS, in order: logs, split names in folders, split names in files, everything is train. */
export const DEFAULT_PATTERN_SETS: Map<string, string[]>[] = [
  new Map([['logs', ['**/*.eval']]]),
  keywordPatterns(DIRNAME_BASES),
  keywordPatterns(FILENAME_BASES),
  new Map([['train', ['**']]]),
];

const FILES_TO_IGNORE = ['README.md', 'config.json', 'dataset_info.json', 'dataset_infos.json', 'dummy_data.zip', 'dataset_dict.json'];

// --- extensions and formats (datasets/packaged_modules/__init__.py) ---------------------------

const MODULE_EXTENSIONS: Record<string, string[]> = {
  csv: ['.csv', '.tsv'],
  json: ['.json', '.jsonl', '.ndjson'],
  parquet: ['.parquet', '.geoparquet', '.gpq'],
  arrow: ['.arrow'],
  text: ['.txt'],
  conll: ['.conll', '.conllu'],
  webdataset: ['.tar'],
  xml: ['.xml'],
  hdf5: ['.hdf5', '.h5'],
  eval: ['.eval'],
  lance: ['.lance'],
  tsfile: ['.tsfile'],
};
/** The media folders take their extensions in lower and upper case. */
const MEDIA_EXTENSIONS: Record<string, string> = {
  imagefolder:
    'blp bmp dib bufr cur pcx dcx dds ps eps fit fits fli flc ftc ftu gbr gif grib png apng jp2 j2k jpc jpf jpx j2c icns ico im iim tif tiff jfif jpe jpg jpeg msp pcd pxr pbm pgm ppm pnm psd bw rgb rgba sgi ras tga icb vda vst webp wmf emf xbm xpm',
  audiofolder:
    'mpg aiff au avr caf flac htk svx mat4 mat5 mpc2k ogg paf pvf raw rf64 sd2 sds ircam voc w64 wav nist wavex wve xi mp3 opus 3gp 3g2 asf flv m4v webm f4v wmv wma ogm mxf nut',
  videofolder: 'mpeg avi mp4 mov mkv',
  meshfolder: 'glb ply stl',
  pdffolder: 'pdf',
  niftifolder: 'nii',
};
const EXTENSION_TO_MODULE = new Map<string, string>();
for (const [m, exts] of Object.entries(MODULE_EXTENSIONS)) for (const e of exts) EXTENSION_TO_MODULE.set(e, m);
for (const [m, exts] of Object.entries(MEDIA_EXTENSIONS))
  for (const e of exts.split(' ')) {
    EXTENSION_TO_MODULE.set(`.${e}`, m);
    EXTENSION_TO_MODULE.set(`.${e.toUpperCase()}`, m);
  }
/** _ALL_ALLOWED_EXTENSIONS: every module's extensions, `.zip`, and lance's metadata extensions. */
const ALLOWED_EXTENSIONS = new Set([...EXTENSION_TO_MODULE.keys(), '.zip', '.idx', '.manifest', '.txn']);
const METADATA_FILENAMES = new Set(['latest_version_hint.json', 'metadata.csv', 'metadata.jsonl', 'metadata.parquet']);

const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const suffixes = (p: string) => basename(p).split('.').slice(1);

/** infer_module_for_data_files_list: the most common extension's module (ties: parquet, lance, arrow, jsonl, json, csv, then by name). */
export function inferModule(files: readonly string[]): string | null {
  const counts = new Map<string, { ext: string; meta: boolean; n: number }>();
  for (const f of files)
    for (const s of suffixes(f)) {
      const ext = `.${s.toLowerCase()}`;
      const meta = METADATA_FILENAMES.has(basename(f));
      const k = `${ext}\0${meta}`;
      const c = counts.get(k) ?? { ext, meta, n: 0 };
      c.n++;
      counts.set(k, c);
    }
  const prefer = ['.parquet', '.lance', '.arrow', '.jsonl', '.json', '.csv'];
  const key = (c: { ext: string; meta: boolean; n: number }) => [c.meta ? 0 : 1, c.n, ...prefer.map((p) => (c.ext === p ? 1 : 0))];
  const sorted = [...counts.values()].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return kb[i]! - ka[i]!;
    return a.ext < b.ext ? 1 : a.ext > b.ext ? -1 : 0;
  });
  for (const c of sorted) {
    if (EXTENSION_TO_MODULE.has(c.ext)) return EXTENSION_TO_MODULE.get(c.ext)!;
    if (c.ext === '.zip') return 'zip';
  }
  return null;
}

/** DataFilesList.filter(extensions=...): a module's extension, possibly followed by one more (`.jsonl.gz`). */
function hasModuleExtension(path: string, module: string): boolean {
  const exts = [...(MODULE_EXTENSIONS[module] ?? []), '.zip'];
  return exts.some((e) => new RegExp(`^.*(${e.replace('.', '\\.')})(\\..+)?$`, 's').test(path));
}

// --- resolving patterns (data_files.py resolve_pattern) -----------------------------------------

function parentParts(p: string): string[] {
  return p.split('/').slice(0, -1);
}

/** _is_inside_unrequested_special_dir. */
function unrequestedSpecial(path: string, pattern: string): boolean {
  return parentParts(path).filter((s) => s.startsWith('__')).length !== parentParts(pattern).filter((s) => s.startsWith('__')).length;
}

/** _is_unrequested_hidden_file_or_is_inside_unrequested_hidden_dir. */
function unrequestedHidden(path: string, pattern: string): boolean {
  const hidden = (s: string) => s.startsWith('.') && !/^\.+$/.test(s);
  return path.split('/').filter(hidden).length !== pattern.split('/').filter(hidden).length;
}

/**
 * resolve_pattern over a listing: the files matching `pattern` (relative to `base`), sorted, less the
 * ignored, hidden and `__*` ones; with `allowed`, only files with a data extension. Paths stay relative
 * to the repo root.
 */
export function resolvePattern(files: readonly string[], pattern: string, base: string, allowed: boolean): string[] {
  const full = base ? `${base}/${pattern}` : pattern;
  const ignore = new Set(FILES_TO_IGNORE.filter((f) => f !== basename(pattern)));
  let matched: string[];
  if (!hasMagic(full)) matched = files.includes(full) ? [full] : [];
  else {
    const re = globToRegExp(full);
    matched = files.filter((f) => re.test(f)).sort(codePointCompare);
  }
  return matched.filter(
    (f) =>
      !ignore.has(basename(f)) &&
      !unrequestedSpecial(f, full) &&
      !unrequestedHidden(f, full) &&
      (!allowed || suffixes(f).some((s) => ALLOWED_EXTENSIONS.has(`.${s}`))),
  );
}

/** _get_data_files_patterns: the first pattern set that matches anything, with its splits. */
export function defaultPatterns(files: readonly string[], base: string, where: string): Map<string, string[]> {
  const sharded = resolvePattern(files, SHARDED_PATTERN.replace('{split}', '*'), base, false);
  if (sharded.length > 0) {
    const splits = new Set<string>();
    const re = /^(.+)-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9].*\..*$/s;
    for (const f of sharded) splits.add(re.exec(basename(f))![1]!);
    for (const s of splits) if (!SPLIT_NAME.test(s)) throw new UserError(`${where}: split name ${JSON.stringify(s)} (from data/${s}-NNNNN-of-NNNNN files) is not a valid split name`, ExitCode.corrupt);
    const known = ['train', 'validation', 'test'];
    const order = [...known.filter((s) => splits.has(s)), ...[...splits].filter((s) => !known.includes(s)).sort(codePointCompare)];
    return new Map(order.map((s) => [s, [SHARDED_PATTERN.replace('{split}', s)]]));
  }
  for (const set of DEFAULT_PATTERN_SETS) {
    const found = new Map<string, string[]>();
    for (const [split, patterns] of set) if (patterns.some((p) => resolvePattern(files, p, base, false).length > 0)) found.set(split, patterns);
    if (found.size > 0) return found;
  }
  throw new UserError(`${where}: no data files${base ? ` in ${base}/` : ''} (only README.md, hidden or ignored files)`, ExitCode.missingInput);
}

// --- the whole choice ---------------------------------------------------------------------------

export interface DataFilesChoice {
  /** The config used (null: a repo without `configs:`, datasets' "default"). */
  config: string | null;
  split: string;
  /** Every split of that config, in datasets' order. */
  splits: string[];
  /** The split's files, repo paths in datasets' order. */
  files: string[];
  /** datasets' builder module for them (parquet, json, ...). */
  module: string;
}

/** The data files of one config and split, as `datasets.load_dataset(repo, config)[split]` reads them. */
export function chooseDataFiles(files: readonly string[], readme: string | null, want: { config: string | null; split: string | null }, where: string): DataFilesChoice {
  const configs = cardConfigs(readme, where);
  let config: string | null = null;
  let patterns: Map<string, string[]>;
  let base = '';
  if (configs.length > 0) {
    const names = configs.map((c) => c.config_name);
    config = want.config ?? defaultConfigName(configs, where);
    if (config === null) throw new UserError(`${where}: the dataset has several configs and none is the default; choose one with --hub-config (${names.join(', ')})`, ExitCode.usage);
    const spec = configs.find((c) => c.config_name === config);
    if (!spec) throw new UserError(`${where}: no config ${config} (configs: ${names.join(', ')})`, ExitCode.usage);
    base = typeof spec.data_dir === 'string' ? spec.data_dir.replace(/\/+$/, '') : '';
    patterns = spec.data_files !== undefined && spec.data_files !== null ? sanitizePatterns(spec.data_files) : defaultPatterns(files, base, where);
  } else {
    if (want.config !== null && want.config !== 'default') throw new UserError(`${where}: no config ${want.config} (the dataset declares no configs; its one config is default)`, ExitCode.usage);
    patterns = defaultPatterns(files, '', where);
  }
  // Every split is resolved, as DataFilesDict.from_patterns does: a missing file named in any split is an error.
  const resolved = new Map<string, string[]>();
  for (const [split, pats] of patterns) {
    const out: string[] = [];
    for (const p of pats) {
      const got = resolvePattern(files, p, base, true);
      if (got.length === 0 && !hasMagic(p)) throw new UserError(`${where}: README.md names ${base ? `${base}/` : ''}${p} (split ${split}), which is not in the dataset`, ExitCode.missingInput);
      out.push(...got);
    }
    resolved.set(split, out);
  }
  const splits = [...resolved.keys()];
  const modules = new Set(splits.map((s) => inferModule(resolved.get(s)!)));
  if (modules.size > 1) throw new UserError(`${where}: the splits hold files of different formats (${[...modules].join(', ')})`, ExitCode.usage);
  const module = [...modules][0] ?? null;
  if (module === null) throw new UserError(`${where}: no supported data files${config ? ` in config ${config}` : ''}`, ExitCode.missingInput);
  const split = want.split ?? 'train';
  if (!resolved.has(split)) throw new UserError(`${where}: no split ${split}${config ? ` in config ${config}` : ''}; choose one with --hub-split (${splits.join(', ')})`, ExitCode.usage);
  const chosen = resolved.get(split)!.filter((f) => hasModuleExtension(f, module));
  return { config, split, splits, files: chosen, module };
}
