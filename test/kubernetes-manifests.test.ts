// The Kubernetes example (docs/kubernetes/*.yaml) against the Kubernetes API schema, without a cluster:
// every document is validated by kubernetes-models (types, required fields, enums, formats, from the
// API's OpenAPI schema), and its fields are checked against the same package's TypeScript types with
// the compiler's excess-property check, which catches the misspelt or misplaced field that the
// schema lets through and that `kubectl apply` (strict field validation) refuses. Then the example's
// own rules: the Indexed Job runs N = completions = parallelism tasks with --partition auto/N, every
// pod mounts the one shared claim, and the merge reads the folder the tasks write.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Pod } from 'kubernetes-models/v1/Pod';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { ROOT } from './support/cli.js';

const DIR = join(ROOT, 'docs', 'kubernetes');

/** apiVersion/kind -> the model that validates it and the type its fields are checked against. */
const MODELS: Record<string, { validate: (doc: object) => void; type: string; module: string }> = {
  'batch/v1/Job': { validate: (d) => new Job(d as never).validate(), type: 'IJob', module: 'kubernetes-models/batch/v1/Job' },
  'v1/Pod': { validate: (d) => new Pod(d as never).validate(), type: 'IPod', module: 'kubernetes-models/v1/Pod' },
  'v1/PersistentVolumeClaim': { validate: (d) => new PersistentVolumeClaim(d as never).validate(), type: 'IPersistentVolumeClaim', module: 'kubernetes-models/v1/PersistentVolumeClaim' },
};

type Doc = { apiVersion?: string; kind?: string; [k: string]: unknown };

function parseManifest(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(join(DIR, file), 'utf8'));
  if (!Array.isArray(docs)) throw new Error(`${file}: not YAML documents`);
  return docs.map((d, k) => {
    if (d.errors.length > 0) throw new Error(`${file}, document ${k}: ${d.errors[0]!.message}`);
    return d.toJS() as Doc;
  });
}

/** Schema errors of each document (kubernetes-models validate()), as "kind name: message". */
function schemaErrors(docs: Doc[]): string[] {
  const errors: string[] = [];
  for (const d of docs) {
    const model = MODELS[`${d.apiVersion}/${d.kind}`];
    if (!model) {
      errors.push(`unknown apiVersion/kind ${d.apiVersion}/${d.kind}`);
      continue;
    }
    try {
      model.validate(d);
    } catch (e) {
      errors.push(`${d.kind}: ${(e as Error).message}`);
    }
  }
  return errors;
}

/**
 * Fields the API types do not have: each document as an object literal typed as its model's
 * interface, type-checked in memory; the diagnostics, one line each.
 */
function fieldErrors(docs: Doc[]): string[] {
  const known = docs.filter((d) => MODELS[`${d.apiVersion}/${d.kind}`]);
  const file = join(ROOT, 'test', 'kubernetes-manifest-fields.ts');
  const source =
    known.map((d, k) => `import type { ${MODELS[`${d.apiVersion}/${d.kind}`]!.type} as T${k} } from '${MODELS[`${d.apiVersion}/${d.kind}`]!.module}';`).join('\n') +
    '\n' +
    known.map((d, k) => `export const doc${k}: T${k} = ${JSON.stringify(d, null, 1)};`).join('\n');
  const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => (name === file ? ts.createSourceFile(name, source, lang) : getSourceFile(name, lang, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
}

/** The example's own rules, as messages (none: it holds together). */
function exampleErrors(byFile: Record<string, Doc[]>): string[] {
  const errors: string[] = [];
  const all = Object.values(byFile).flat();
  const claims = all.filter((d) => d.kind === 'PersistentVolumeClaim').map((d) => (d.metadata as { name: string }).name);
  type PodSpec = { containers: { command?: string[]; args?: string[]; volumeMounts?: { name: string; mountPath: string }[]; env?: { name: string; value?: string }[] }[]; volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[] };
  const podSpecs = all.map((d) => (d.kind === 'Job' ? ((d.spec as { template: { spec: PodSpec } }).template.spec) : d.kind === 'Pod' ? (d.spec as PodSpec) : null));
  for (const spec of podSpecs) {
    if (!spec) continue;
    for (const v of spec.volumes ?? []) if (v.persistentVolumeClaim && !claims.includes(v.persistentVolumeClaim.claimName)) errors.push(`volume ${v.name} claims ${v.persistentVolumeClaim.claimName}, which no manifest defines`);
  }
  const commandOf = (d: Doc) => {
    const c = (d.spec as { template: { spec: PodSpec } }).template.spec.containers[0]!;
    return [...(c.command ?? []), ...(c.args ?? [])].join(' ');
  };
  const mine = byFile['mine-job.yaml']?.find((d) => d.kind === 'Job');
  const merge = byFile['merge-job.yaml']?.find((d) => d.kind === 'Job');
  if (!mine || !merge) return [...errors, 'mine-job.yaml and merge-job.yaml must each hold a Job'];
  const spec = mine.spec as { completionMode?: string; completions?: number; parallelism?: number };
  const line = commandOf(mine);
  const auto = /--partition auto\/(\d+)/.exec(line);
  if (spec.completionMode !== 'Indexed') errors.push(`the mining Job is not Indexed (completionMode ${spec.completionMode})`);
  if (!auto) errors.push('the mining command has no --partition auto/N');
  else if (Number(auto[1]) !== spec.completions || spec.completions !== spec.parallelism) {
    errors.push(`--partition auto/${auto[1]}, completions ${spec.completions} and parallelism ${spec.parallelism} differ`);
  }
  const out = /--out '?([^' ]+)'?/.exec(line)?.[1] ?? '';
  if (!out.includes('{i}')) errors.push(`the mining --out ${out} has no {i}: every pod would write the same file`);
  const partsDir = out.slice(0, out.lastIndexOf('/'));
  if (!commandOf(merge).includes(`merge ${partsDir} `)) errors.push(`the merge does not read ${partsDir}, where the pods write their parts`);
  return errors;
}

const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();
const BY_FILE = Object.fromEntries(FILES.map((f) => [f, parseManifest(f)]));

describe('docs/kubernetes manifests', () => {
  it('are the three the README runs', () => {
    expect(FILES).toEqual(['merge-job.yaml', 'mine-job.yaml', 'volume.yaml']);
    expect(Object.values(BY_FILE).flat().map((d) => `${d.kind}/${(d.metadata as { name: string }).name}`)).toEqual([
      'Job/divergence-mine-merge',
      'Job/divergence-mine',
      'PersistentVolumeClaim/divergence-mine',
      'Pod/divergence-mine-files',
    ]);
  });

  for (const f of FILES) {
    it(`${f}: valid against the Kubernetes API schema, with no unknown field`, () => {
      expect(schemaErrors(BY_FILE[f]!)).toEqual([]);
      expect(fieldErrors(BY_FILE[f]!)).toEqual([]);
    }, 60_000);
  }

  it('hold together: N = completions = parallelism = auto/N, one shared claim, the merge reads the parts', () => {
    expect(exampleErrors(BY_FILE)).toEqual([]);
  });
});

describe('broken manifests fail', () => {
  const mine = () => structuredClone(BY_FILE['mine-job.yaml']!);
  const job = (docs: Doc[]) => docs[0] as { spec: Record<string, unknown> & { template: { spec: { containers: Record<string, unknown>[]; volumes: { persistentVolumeClaim: { claimName: string } }[] } } } };

  it('a wrong type, a missing required field, a value outside an enum: the schema', () => {
    const a = mine();
    job(a).spec.completions = 'four';
    expect(schemaErrors(a)).toEqual(['Job: data/spec/completions must be integer']);
    const b = mine();
    delete job(b).spec.template.spec.containers[0]!.name;
    expect(schemaErrors(b)).toEqual(['Job: data/spec/template/spec/containers/0 must have required property name']);
    const c = mine();
    job(c).spec.completionMode = 'indexed';
    expect(schemaErrors(c)).toEqual(['Job: data/spec/completionMode must be equal to one of the allowed values']);
    expect(schemaErrors([{ apiVersion: 'batch/v2', kind: 'Job' }])).toEqual(['unknown apiVersion/kind batch/v2/Job']);
  });

  it('a misspelt or misplaced field: the types', () => {
    const a = mine();
    job(a).spec.completionMod = 'Indexed';
    expect(schemaErrors(a)).toEqual([]); // the schema alone lets it through
    const errs = fieldErrors(a);
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^Object literal may only specify known properties, and '"completionMod"' does not exist in type 'IJobSpec'\.$/);
    const b = mine();
    job(b).spec.template.spec.containers[0]!.volumeMount = [{ name: 'data', mountPath: '/data' }];
    expect(fieldErrors(b)).toEqual([`Object literal may only specify known properties, and '"volumeMount"' does not exist in type 'IContainer'.`]);
  }, 60_000);

  it('N out of step, a claim nobody defines, --out without {i}: the example\'s rules', () => {
    const a = mine();
    job(a).spec.parallelism = 8;
    expect(exampleErrors({ ...BY_FILE, 'mine-job.yaml': a })).toEqual(['--partition auto/4, completions 4 and parallelism 8 differ']);
    const b = mine();
    job(b).spec.template.spec.volumes[0]!.persistentVolumeClaim.claimName = 'other';
    const c = job(b).spec.template.spec.containers[0]!;
    c.args = [(c.args as string[])[0]!.replace("part-{i}-of-{N}.jsonl'", "part.jsonl'")];
    expect(exampleErrors({ ...BY_FILE, 'mine-job.yaml': b })).toEqual([
      'volume data claims other, which no manifest defines',
      'the mining --out /data/parts/part.jsonl has no {i}: every pod would write the same file',
    ]);
  });
});
