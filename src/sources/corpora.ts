// The public SWE trajectory corpora this tool knows by name (`--source NAME`), and what each one
// needs: the schema (how messages are read and actions signed) and the columns of each role.
// The rules behind each entry are in docs/mining-contract.md §10 (one section per source).
//
// | --source         | corpus                                   | schema          | id                        | instance                     | messages   | label    |
// |------------------|------------------------------------------|-----------------|---------------------------|------------------------------|------------|----------|
// | nebius-openhands | nebius/SWE-rebench-openhands-trajectories| openhands       | trajectory_id             | instance_id                  | trajectory | resolved |
// | swe-agent        | nebius/SWE-agent-trajectories            | swe-agent       | none: instance + "#" + n  | instance_id                  | trajectory | target   |
// | swe-smith        | SWE-bench/SWE-smith-trajectories         | swe-smith       | traj_id                   | instance_id                  | messages   | resolved |
// | coderforge       | togethercomputer/CoderForge-Preview      | openhands       | trajectory_id             | trajectory_id minus _run<N>  | messages   | reward   |
// | open-swe-traces  | nvidia/Open-SWE-Traces                   | open-swe-traces | trajectory_id             | instance_id                  | messages (or trajectory) | resolved |
// | swe-gym          | SWE-Gym/OpenHands-Sampled-Trajectories   | openhands       | run_id + instance_id      | instance_id                  | messages   | resolved |
// | text-actions     | mini-swe-agent style exports             | text-actions    | detected                  | detected                     | detected   | detected |
import type { SchemaName, SchemaOverrides } from './schema.js';

export type SourceName = 'nebius-openhands' | 'swe-agent' | 'swe-smith' | 'coderforge' | 'open-swe-traces' | 'swe-gym' | 'text-actions';

/** CoderForge's run ids are `<instance>_run<N>`: the instance is the id without that suffix. */
export const CODERFORGE_INSTANCE = '^(.+)_run\\d+$';

export interface SourcePreset {
  /** The corpus (Hugging Face dataset) this preset is for. */
  corpus: string;
  /** The overrides it stands for; options given on the command line win over them. */
  overrides: SchemaOverrides & { schema: SchemaName };
  /** Section of docs/mining-contract.md with this source's rules. */
  section: string;
}

export const SOURCES: Readonly<Record<SourceName, SourcePreset>> = {
  'nebius-openhands': {
    corpus: 'nebius/SWE-rebench-openhands-trajectories',
    overrides: { schema: 'openhands', idColumn: 'trajectory_id', instanceColumn: 'instance_id', messagesColumn: 'trajectory', resolvedColumn: 'resolved' },
    section: '§1',
  },
  'swe-agent': {
    corpus: 'nebius/SWE-agent-trajectories',
    overrides: { schema: 'swe-agent', synthesiseId: true, instanceColumn: 'instance_id', messagesColumn: 'trajectory', resolvedColumn: 'target' },
    section: '§10.2',
  },
  'swe-smith': {
    corpus: 'SWE-bench/SWE-smith-trajectories',
    overrides: { schema: 'swe-smith', idColumn: 'traj_id', instanceColumn: 'instance_id', messagesColumn: 'messages', resolvedColumn: 'resolved' },
    section: '§10.3',
  },
  coderforge: {
    corpus: 'togethercomputer/CoderForge-Preview',
    overrides: { schema: 'openhands', idColumn: 'trajectory_id', instanceFromId: CODERFORGE_INSTANCE, messagesColumn: 'messages', resolvedColumn: 'reward' },
    section: '§10.4',
  },
  'open-swe-traces': {
    corpus: 'nvidia/Open-SWE-Traces',
    overrides: { schema: 'open-swe-traces', idColumn: 'trajectory_id', instanceColumn: 'instance_id', resolvedColumn: 'resolved' },
    section: '§10.5',
  },
  'swe-gym': {
    corpus: 'SWE-Gym/OpenHands-Sampled-Trajectories',
    overrides: { schema: 'openhands', idColumn: 'run_id,instance_id', instanceColumn: 'instance_id', messagesColumn: 'messages', resolvedColumn: 'resolved' },
    section: '§10.6',
  },
  'text-actions': {
    corpus: 'mini-swe-agent style exports (THOUGHT + one ```bash block)',
    overrides: { schema: 'text-actions' },
    section: '§10.7',
  },
};

export const SOURCE_NAMES = Object.keys(SOURCES) as SourceName[];

export function isSourceName(s: string): s is SourceName {
  return Object.hasOwn(SOURCES, s);
}
