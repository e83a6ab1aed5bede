// Text actions: the action signature of SWE-agent / mini-swe-agent style messages,
// whose action is the last fenced bash block of the assistant text (src/sources/text-actions.ts).
//
// The fixture rows in fixtures/sources/text-actions.jsonl are derived from three real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius (Trofimova et al., "OpenHands
// Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025); see fixtures/sources/README.md.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normaliseMessage } from '../src/contract/normalise.js';
import { DEFAULT_REASONING_KEYS, keyAndSignature } from '../src/contract/sign.js';
import {
  fencedBlocks,
  lastActionBlock,
  textActionMessageSignature,
  textActionSignature,
  textActionsKeyAndSignature,
} from '../src/sources/text-actions.js';
import type { Message, ToolCall } from '../src/types.js';

const RK = new Set(DEFAULT_REASONING_KEYS);
const F = '```';

describe('textActionSignature', () => {
  const cases: [name: string, content: string | null, expected: string, opts?: { bareFence?: boolean }][] = [
    ['mini-swe-agent reply: reasoning around the block is ignored', `THOUGHT: list the tests first.\n\n${F}bash\nls tests/\n${F}`, 'bash ls tests/'],
    ['the LAST bash block wins', `THOUGHT: two tries\n${F}bash\nls\n${F}\nthen\n${F}bash\npytest -x\n${F}\ntrailing words`, 'bash pytest -x'],
    ['sh and shell are action languages', `${F}sh\ngrep -rn foo .\n${F}`, 'bash grep -rn foo .'],
    ['shell with an info string after the language', `${F}shell title="run"\nmake test\n${F}`, 'bash make test'],
    ['language is case-insensitive, blank before it allowed', `${F} Bash\npwd\n${F}`, 'bash pwd'],
    ["mini-swe-agent's mswea_bash_command tag", `${F}mswea_bash_command\nls -la\n${F}`, 'bash ls -la'],
    ['a python block is not an action: text action', `THOUGHT: the fix\n${F}python\nx = 1\n${F}`, 'text THOUGHT: the fix\n```python\nx = 1\n```'],
    ['the last ACTION block, skipping a later python block', `${F}bash\ncat a.py\n${F}\n${F}python\nprint(1)\n${F}`, 'bash cat a.py'],
    ['a bash fence inside a 4-backtick block is body text', `\`\`\`\`markdown\n${F}bash\nrm -rf /\n${F}\n\`\`\`\``, 'text ````markdown\n```bash\nrm -rf /\n```\n````'],
    ['closing fence may be longer and indented up to 3 spaces', `${F}bash\necho hi\n   \`\`\`\`  `, 'bash echo hi'],
    ['4-space indented fence is not a fence', `    ${F}bash\n    ls\n    ${F}`, 'text ```bash\n    ls\n    ```'],
    ['unclosed fence: no block, text action', `THOUGHT: go\n${F}bash\nls -la`, 'text THOUGHT: go\n```bash\nls -la'],
    ['an unclosed fence after a closed one: the closed one counts', `${F}bash\nls\n${F}\n${F}bash\npytest`, 'bash ls'],
    ['bare fence is not an action by default', `DISCUSSION\nopen the file\n${F}\nopen setup.py\n${F}`, 'text DISCUSSION\nopen the file\n```\nopen setup.py\n```'],
    ['bare fence with bareFence (classic SWE-agent)', `DISCUSSION\nopen the file\n${F}\nopen setup.py\n${F}`, 'bash open setup.py', { bareFence: true }],
    ['one-line span is not a fence', `run ${F}ls${F} please`, 'text run ```ls``` please'],
    ['tilde fence is not a fence', '~~~bash\nls\n~~~', 'text ~~~bash\nls\n~~~'],
    ['whitespace: CRLF, trailing blanks per line, outer blank lines; inner indentation kept', `${F}bash\r\n\r\ncd /repo && \\  \r\n    python x.py\t\r\n\r\n${F}\r\n`, 'bash cd /repo && \\\n    python x.py'],
    ['empty block', `THOUGHT: nothing\n${F}bash\n${F}`, 'bash '],
    ['no block at all: "text " + norm(content)', 'I am done.  \r\nBye\t', 'text I am done.\nBye'],
    ['null content', null, 'text '],
  ];
  it.each(cases)('%s', (_name, content, expected, opts) => {
    expect(textActionSignature(content, opts)).toBe(expected);
  });

  it('a heredoc holding a markdown fence ends the block at that line (as the harness regex does)', () => {
    // mini-swe-agent's regex (```bash\s*\n(.*?)\n```) also stops at the first line starting with ```.
    const content = `${F}bash\ncat <<'EOF' > notes.md\n${F}\ncode\n${F}\nEOF\n${F}`;
    expect(fencedBlocks(content)[0]).toEqual({ lang: 'bash', body: "cat <<'EOF' > notes.md" });
  });

  it('lastActionBlock reports the language', () => {
    expect(lastActionBlock(`${F}sh\nls\n${F}`)).toEqual({ lang: 'sh', body: 'ls' });
    expect(lastActionBlock('no fences')).toBeNull();
  });
});

describe('text-action comparison keys', () => {
  const tally = () => ({ malformed_arguments: 0, unknown_roles: 0 });
  const msg = (raw: Record<string, unknown>) => normaliseMessage(raw, tally());

  it('two replies with different reasoning and the same block have the same key', () => {
    const a = msg({ role: 'assistant', content: `THOUGHT: first I look.\n${F}bash\nls -la  \n${F}` });
    const b = msg({ role: 'assistant', content: `THOUGHT: let me list the directory\r\n${F}bash\r\nls -la\r\n${F}` });
    expect(textActionsKeyAndSignature(a, RK)).toEqual({ key: 'assistant\nbash ls -la', signature: 'bash ls -la' });
    expect(textActionsKeyAndSignature(b, RK).key).toBe(textActionsKeyAndSignature(a, RK).key);
  });

  it('tool calls keep the contract signature (a mixed source)', () => {
    const m = msg({
      role: 'assistant',
      content: `${F}bash\nignored\n${F}`,
      tool_calls: [{ id: 'x', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "ls", "thought": "t"}' } }],
    });
    const calls = (m as { tool_calls: ToolCall[] }).tool_calls;
    expect(textActionMessageSignature({ content: m.content, tool_calls: calls }, RK)).toBe('execute_bash {"command":"ls"}');
  });

  it('non-assistant keys are the contract keys', () => {
    const msgs: Message[] = [
      msg({ role: 'user', content: '<returncode>0</returncode>\n<output>\nok  \n</output>' }),
      msg({ role: 'system', content: 'You are a helpful assistant' }),
      msg({ role: 'tool', content: 'out', name: 'bash', tool_call_id: '1' }),
    ];
    for (const m of msgs) expect(textActionsKeyAndSignature(m, RK)).toEqual(keyAndSignature(m, RK));
  });
});

describe('fixtures/sources/text-actions.jsonl (derived from CC-BY-4.0 © Nebius rows)', () => {
  const rows = readFileSync(new URL('../fixtures/sources/text-actions.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { instance_id: string; resolved: boolean; messages: Record<string, unknown>[] });
  const tally = { malformed_arguments: 0, unknown_roles: 0 };
  const keys = (r: (typeof rows)[number]) => r.messages.map((m) => textActionsKeyAndSignature(normaliseMessage(m, tally), RK));

  // Hand-derived from the skip indices in fixtures/sources/README.md and the real commands.
  const cases: [instance: string, index: number, chosen: string, rejected: string][] = [
    [
      'tianocore__edk2-pytool-library-372',
      10,
      'bash cd /workspace/tianocore__edk2-pytool-library__0.15 && find . -name "*.py" -path "./tests*" | head -10',
      'bash cd /workspace/tianocore__edk2-pytool-library__0.15 && python -m pytest --help | head -20',
    ],
    ['PyPSA__linopy-79', 10, 'bash cd /workspace/PyPSA__linopy__0.0 && find . -name "*.md" -o -name "*.rst" | head -10', 'bash cd /workspace/PyPSA__linopy__0.0 && ls -la'],
    ['numpy__numpydoc-101', 16, 'bash cd /workspace/numpy__numpydoc__0.7 && grep -r "Unknown section" .', 'bash nl -ba /workspace/numpy__numpydoc__0.7/numpydoc/docscrape.py'],
  ];
  it.each(cases)('%s diverges at message %i with bash signatures', (instance, index, chosen, rejected) => {
    const r = rows.find((x) => x.instance_id === instance && x.resolved)!;
    const f = rows.find((x) => x.instance_id === instance && !x.resolved)!;
    const kr = keys(r);
    const kf = keys(f);
    let i = 0;
    while (i < Math.min(kr.length, kf.length) && kr[i]!.key === kf[i]!.key) i++;
    expect(i).toBe(index);
    expect(r.messages[i]!.role).toBe('assistant');
    expect(kr[i]!.signature).toBe(chosen);
    expect(kf[i]!.signature).toBe(rejected);
  });

  it('every reply is a bash block except the text-only think replies', () => {
    for (const r of rows) {
      for (const m of r.messages) {
        if (m.role !== 'assistant') continue;
        const sig = textActionSignature(m.content as string);
        if (sig.startsWith('text ')) expect(sig).toMatch(/^text THOUGHT: /);
        else expect(sig).toMatch(/^bash \S/);
      }
    }
  });
});
