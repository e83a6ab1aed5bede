// Input arguments that may name local files or Hub datasets. A local path that exists always wins;
// `hf://datasets/...` is always the Hub; a bare `OWNER/NAME` that is no local path is the Hub, and
// stderr says which of the two was used. Parsing (and every local check) happens first, so that bad
// options and output paths fail before anything is downloaded; `resolve` then fetches.
import { existsSync } from 'node:fs';
import { resolveInputs, type InputFile, type InputKind } from '../io/inputs.js';
import { ExitCode, UserError } from '../errors.js';
import { bareRef, hubUri, isBareName, isHubUri, parseHubUri, webAddressProblem, type HubRef } from './names.js';
import type { HubOptions, HubSource } from './resolve.js';

export type InputItem = { local: InputFile[] } | { hub: HubRef; forced: InputKind | null };

export interface InputRequest {
  items: InputItem[];
  /** Lines for stderr: which of a local path and a Hub dataset a bare name meant. */
  notes: string[];
}

/** Each group's arguments, in order: local ones resolved now (their errors first), Hub ones parsed. */
export function parseInputs(groups: readonly { args: readonly string[]; forced: InputKind | null }[]): InputRequest {
  const items: InputItem[] = [];
  const notes: string[] = [];
  for (const { args, forced } of groups)
    for (const arg of args) {
      const local = existsSync(arg);
      const web = local ? null : webAddressProblem(arg);
      if (web !== null) throw new UserError(web, ExitCode.usage);
      if (isHubUri(arg)) items.push({ hub: parseHubUri(arg), forced });
      else if (isBareName(arg) && !local) {
        items.push({ hub: bareRef(arg), forced });
        notes.push(`${arg}: no such local path; reading the Hub dataset ${hubUri(arg, null)}`);
      } else {
        if (isBareName(arg)) notes.push(`${arg}: reading the local path (for the Hub dataset of that name, give ${hubUri(arg, null)})`);
        items.push({ local: resolveInputs([arg], forced) });
      }
    }
  return { items, notes };
}

export function hasHubInputs(r: InputRequest): boolean {
  return r.items.some((i) => 'hub' in i);
}

/** The files of every input, in order, with the Hub sources they came from. */
export async function resolveRequest(r: InputRequest, o: HubOptions): Promise<{ inputs: InputFile[]; sources: HubSource[] }> {
  const inputs: InputFile[] = [];
  const sources: HubSource[] = [];
  for (const item of r.items) {
    if ('local' in item) inputs.push(...item.local);
    else {
      // The Hub client (and its YAML parser, about 0.1 s of module loading) only for a Hub input.
      const { resolveHubInput } = await import('./resolve.js');
      const got = await resolveHubInput(item.hub, item.forced, o);
      inputs.push(...got.files);
      sources.push(got.source);
    }
  }
  return { inputs, sources };
}
