// The built-in chat template, `qwen3-coder-style`: the default template of `--tokenizer` for the
// trl shape. Written from scratch for this project in the style of the Qwen3-Coder chat templates
// (ChatML turns, XML-style tool definitions and calls, consecutive tool results grouped in one user
// turn); it is not any model's template. The same text is test/template/qwen3-coder-style.jinja
// (test/tokens-template.test.ts checks they are equal).
//
// `BuiltinRenderer` renders it piece by piece — the header (system message + tools), one piece per
// message, the generation prompt — so that token counts can be cached per piece: every piece starts
// or ends at an added token (<|im_start|>, <|im_end|>, <tool_response>, </tool_response>), so the
// count of the whole render is the sum of the pieces' counts. The header is rendered by the Jinja
// template itself (cached per system message and tool list), and so is any value that is not a
// string; test/tokens-template.test.ts checks that the pieces concatenate to the Jinja render.
import { PythonTemplate as Template } from '../templates/python-jinja.js';
import { pyStrip } from '../templates/python-values.js';

export const BUILTIN_TEMPLATE_NAME = 'qwen3-coder-style';

export const BUILTIN_TEMPLATE_SOURCE = `{#- divergence-mine test template. Written from scratch for the tests in the style of the
    Qwen3-Coder chat templates (ChatML turns, XML-style tool definitions and tool calls); it is not
    any model's template. It exercises the constructs that break on badly shaped rows:
    - assistant tool calls iterate \`arguments | items\` (string arguments cannot render),
    - every \`tools[].function.parameters.properties\` entry is rendered, with its extra schema keys
      through \`| string\` / \`| tojson\` (null placeholders cannot render),
    - consecutive tool results are grouped into one user turn (loop.previtem / loop.nextitem). -#}
{%- macro show_value(value) -%}
    {%- if value is mapping or (value is iterable and value is not string) -%}
        {{- value | tojson -}}
    {%- else -%}
        {{- value | string -}}
    {%- endif -%}
{%- endmacro -%}
{%- macro schema_extras(schema, skip) -%}
    {%- for key, value in schema | items -%}
        {%- if key not in skip -%}
            {{- '\\n<' ~ key ~ '>' ~ show_value(value) ~ '</' ~ key ~ '>' -}}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro -%}
{%- set has_tools = tools is defined and tools is iterable and tools | length > 0 -%}
{%- if messages | length > 0 and messages[0].role == 'system' -%}
    {%- set system_text = messages[0].content -%}
    {%- set turns = messages[1:] -%}
{%- else -%}
    {%- set system_text = none -%}
    {%- set turns = messages -%}
{%- endif -%}
{%- if system_text is not none or has_tools -%}
    {{- '<|im_start|>system\\n' -}}
    {%- if system_text is not none -%}
        {{- system_text -}}
    {%- else -%}
        {{- 'You are a software engineering agent working in a sandbox.' -}}
    {%- endif -%}
    {%- if has_tools -%}
        {{- '\\n\\n# Tools\\n\\nFunctions available to you:\\n<tools>' -}}
        {%- for entry in tools -%}
            {%- set fn = entry.function if entry.function is defined else entry -%}
            {{- '\\n<function>\\n<name>' ~ fn.name ~ '</name>' -}}
            {%- if fn.description is defined -%}
                {{- '\\n<description>' ~ (fn.description | trim) ~ '</description>' -}}
            {%- endif -%}
            {{- '\\n<parameters>' -}}
            {%- if fn.parameters is defined and fn.parameters is mapping -%}
                {%- if fn.parameters.properties is defined -%}
                    {%- for pname, pschema in fn.parameters.properties | items -%}
                        {{- '\\n<parameter>\\n<name>' ~ pname ~ '</name>' -}}
                        {%- if pschema.type is defined -%}
                            {{- '\\n<type>' ~ (pschema.type | string) ~ '</type>' -}}
                        {%- endif -%}
                        {%- if pschema.description is defined -%}
                            {{- '\\n<description>' ~ (pschema.description | trim) ~ '</description>' -}}
                        {%- endif -%}
                        {{- schema_extras(pschema, ['name', 'type', 'description']) -}}
                        {{- '\\n</parameter>' -}}
                    {%- endfor -%}
                {%- endif -%}
                {{- schema_extras(fn.parameters, ['type', 'properties']) -}}
            {%- endif -%}
            {{- '\\n</parameters>' -}}
            {{- schema_extras(fn, ['type', 'name', 'description', 'parameters']) -}}
            {{- '\\n</function>' -}}
        {%- endfor -%}
        {{- '\\n</tools>\\n\\nTo call a function, answer with:\\n<tool_call>\\n<function=NAME>\\n<parameter=ARGUMENT>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>' -}}
    {%- endif -%}
    {{- '<|im_end|>\\n' -}}
{%- endif -%}
{%- for m in turns -%}
    {%- if m.role == 'assistant' -%}
        {{- '<|im_start|>assistant' -}}
        {%- set text = m.content if m.content is string else '' -%}
        {%- if m.tool_calls is defined and m.tool_calls is iterable and m.tool_calls | length > 0 -%}
            {%- if text | trim | length > 0 -%}
                {{- '\\n' ~ (text | trim) ~ '\\n' -}}
            {%- endif -%}
            {%- for call in m.tool_calls -%}
                {%- set fn = call.function if call.function is defined else call -%}
                {{- '\\n<tool_call>\\n<function=' ~ fn.name ~ '>\\n' -}}
                {%- if fn.arguments is defined -%}
                    {%- for aname, avalue in fn.arguments | items -%}
                        {{- '<parameter=' ~ aname ~ '>\\n' ~ show_value(avalue) ~ '\\n</parameter>\\n' -}}
                    {%- endfor -%}
                {%- endif -%}
                {{- '</function>\\n</tool_call>' -}}
            {%- endfor -%}
        {%- else -%}
            {{- '\\n' ~ text -}}
        {%- endif -%}
        {{- '<|im_end|>\\n' -}}
    {%- elif m.role == 'tool' -%}
        {%- if loop.first or loop.previtem.role != 'tool' -%}
            {{- '<|im_start|>user' -}}
        {%- endif -%}
        {{- '\\n<tool_response>\\n' ~ m.content ~ '\\n</tool_response>' -}}
        {%- if loop.last or loop.nextitem.role != 'tool' -%}
            {{- '<|im_end|>\\n' -}}
        {%- endif -%}
    {%- else -%}
        {{- '<|im_start|>' ~ m.role ~ '\\n' ~ m.content ~ '<|im_end|>\\n' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\\n' -}}
{%- endif -%}
`;

/** The template's `show_value` macro alone, to render non-string values exactly as the template does. */
function showValueTemplate(): Template {
  const m = /\{%- macro show_value\(value\) -%\}[\s\S]*?\{%- endmacro -%\}/.exec(BUILTIN_TEMPLATE_SOURCE);
  if (!m) throw new Error('built-in template: no show_value macro');
  return new Template(`${m[0]}{{- show_value(v) -}}`);
}

export interface PieceMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
}

export interface RenderedPieces {
  /** System message and tool definitions ("" when the template writes none). */
  header: string;
  /** One piece per message after the system message. */
  turns: string[];
  /** Messages the header consumed (1 when the list starts with a system message). */
  skipped: number;
}

export const GENERATION_PROMPT = '<|im_start|>assistant\n';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export class BuiltinRenderer {
  readonly template = new Template(BUILTIN_TEMPLATE_SOURCE);
  private readonly showValueTpl = showValueTemplate();
  private readonly headers = new Map<string, string>();

  private showValue(v: unknown): string {
    return typeof v === 'string' ? v : this.showValueTpl.render({ v });
  }

  /** The header for the list's system message (if first) and tools; cached per (system text, tools key). */
  header(messages: readonly PieceMessage[], tools: unknown[] | null, toolsKey: string): string | null {
    const system = messages.length > 0 && messages[0]!.role === 'system' ? messages[0]! : null;
    if (system && typeof system.content !== 'string') return null;
    const key = `${system ? `s${system.content as string}` : 'n'}\u0000${toolsKey}`;
    let h = this.headers.get(key);
    if (h === undefined) {
      h = this.template.render({ messages: system ? [system] : [], tools, documents: null, add_generation_prompt: false });
      if (this.headers.size > 64) this.headers.clear();
      this.headers.set(key, h);
    }
    return h;
  }

  /** The piece of one turn (`prevTool`/`nextTool`: the neighbouring turns are tool results). */
  turn(m: PieceMessage, prevTool: boolean, nextTool: boolean): string | null {
    if (typeof m.role !== 'string') return null;
    if (m.role === 'assistant') {
      const text = typeof m.content === 'string' ? m.content : '';
      const calls = m.tool_calls;
      if (calls === undefined || calls === null || (Array.isArray(calls) && calls.length === 0)) return `<|im_start|>assistant\n${text}<|im_end|>\n`;
      if (!Array.isArray(calls)) return null;
      const trimmed = pyStrip(text); // the template's `text | trim`
      let out = trimmed.length > 0 ? `<|im_start|>assistant\n${trimmed}\n` : '<|im_start|>assistant';
      for (const call of calls) {
        if (!isPlainObject(call)) return null;
        const fn = call.function !== undefined ? call.function : call;
        if (!isPlainObject(fn) || typeof fn.name !== 'string') return null;
        out += `\n<tool_call>\n<function=${fn.name}>\n`;
        if (fn.arguments !== undefined) {
          // A Map keeps integer-like keys in the row's order (templates/python-json.ts): rendered whole.
          if (!isPlainObject(fn.arguments) || fn.arguments instanceof Map) return null;
          for (const [k, v] of Object.entries(fn.arguments)) out += `<parameter=${k}>\n${this.showValue(v)}\n</parameter>\n`;
        }
        out += '</function>\n</tool_call>';
      }
      return out + '<|im_end|>\n';
    }
    if (typeof m.content !== 'string') return null;
    if (m.role === 'tool') return `${prevTool ? '' : '<|im_start|>user'}\n<tool_response>\n${m.content}\n</tool_response>${nextTool ? '' : '<|im_end|>\n'}`;
    return `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  }

  /** The pieces of `messages`, or null when a message is outside what the piece renderer covers (render with Jinja then). */
  pieces(messages: readonly PieceMessage[], tools: unknown[] | null, toolsKey: string): RenderedPieces | null {
    const header = this.header(messages, tools, toolsKey);
    if (header === null) return null;
    const skipped = messages.length > 0 && messages[0]!.role === 'system' ? 1 : 0;
    const turns: string[] = [];
    for (let i = skipped; i < messages.length; i++) {
      const prevTool = i > skipped && messages[i - 1]!.role === 'tool';
      const nextTool = i + 1 < messages.length && messages[i + 1]!.role === 'tool';
      const p = this.turn(messages[i]!, prevTool, nextTool);
      if (p === null) return null;
      turns.push(p);
    }
    return { header, turns, skipped };
  }

  /** The whole render from pieces (what `template.render` returns). */
  render(messages: readonly PieceMessage[], tools: unknown[] | null, toolsKey: string, addGenerationPrompt: boolean): string | null {
    const p = this.pieces(messages, tools, toolsKey);
    if (p === null) return null;
    return p.header + p.turns.join('') + (addGenerationPrompt ? GENERATION_PROMPT : '');
  }
}
