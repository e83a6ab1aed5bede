// `divergence-mine report`: the HTML builder and command, then the page itself in headless Chromium
// (charts draw, the table filters, a row opens its diff) on the fixture pairs and on 5,000 generated
// pairs. Screenshots go to test-artifacts/ (git-ignored).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStats, registerReport, runReport, type ReportCliOptions } from '../src/commands/report.js';
import { UserError } from '../src/errors.js';
import { openPublishedSink } from '../src/dataset/file-output.js';
import { readPairs } from '../src/io/pairs.js';
import type { PairRow } from '../src/types.js';
import { ReportBuilder, capText } from '../src/view/report.js';
import { writeSynthPairs } from './data/synth-pairs.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const PAIRS = join(HERE, 'data', 'pairs.jsonl');
const STATS = join(HERE, 'data', 'stats.json');
const ARTIFACTS = join(HERE, '..', 'test-artifacts');
const CHROMIUM = '/usr/bin/chromium';
// expect.poll waits for the page to reach a state; a generous bound so a loaded machine waits instead of failing.
const POLL = { timeout: 240_000, interval: 50 };
/** A browser that dies while it starts (a loaded or memory-short machine) is started again, this many times in all. */
const LAUNCH_ATTEMPTS = 3;
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const fixtureRows: PairRow[] = readFileSync(PAIRS, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as PairRow);

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'dm-report-'));
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function opts(out: string, extra: Partial<ReportCliOptions> = {}): ReportCliOptions {
  return { out, context: 3, maxChars: 1500, force: false, quiet: true, ...extra };
}

async function buildFixtureReport(name: string, extra: Partial<ReportCliOptions> = {}): Promise<string> {
  const out = join(tmp, name);
  await runReport(PAIRS, opts(out, { stats: STATS, force: true, ...extra }));
  return out;
}

/** The JSON the page embeds. */
function embedded(html: string): { n: number; cols: Record<string, unknown[]>; det: { p: unknown[][]; a: string; b: string; ma: number; mb: number }[] } {
  const m = /<script type="application\/json" id="dm-data">([^]*?)<\/script>/.exec(html);
  if (!m) throw new Error('no embedded data');
  return JSON.parse(m[1]!);
}

describe('report: the HTML file', () => {
  it('is self-contained: no external scripts, styles, fonts or images', async () => {
    const html = readFileSync(await buildFixtureReport('r.html'), 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<(script|img|iframe|link)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/@import|url\(/i);
    const data = embedded(html);
    expect(data.n).toBe(6);
    expect(data.cols.inst).toEqual(fixtureRows.map((r) => r.instance_id));
    // only the last 3 prompt messages per pair are embedded
    expect(data.det.map((d) => d.p.length)).toEqual([3, 3, 3, 3, 2, 3]);
    expect(data.det[5]!.p.map((m) => m[0])).toEqual([11, 12, 13]);
    for (const id of ['funnel-chart', 'hist-turn', 'hist-sim', 'tools-chart', 'repos-chart']) expect(html).toContain(`id="${id}"`);
    expect(html).toContain('id="identity"');
    expect(html).not.toContain('id="emitted-mismatch"');
  });

  it('without --stats, explains how to get the funnel', async () => {
    const out = join(tmp, 'nostats.html');
    await runReport(PAIRS, opts(out));
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('id="funnel-missing"');
    expect(html).not.toContain('id="funnel-chart"');
  });

  it('flags stats that do not belong to the pairs file', () => {
    const stats = JSON.parse(readFileSync(STATS, 'utf8'));
    stats.counters.pairs_emitted = 99;
    const b = new ReportBuilder({ source: 'x.jsonl', stats });
    fixtureRows.forEach((pair, index) => b.add({ index, pair, promptLength: pair.prompt.length }));
    const html = b.build();
    expect(html).toContain('id="emitted-mismatch"');
    expect(html).toMatch(/id="identity">counter identity does not hold/);
  });

  it('caps long texts and says how much was left out', () => {
    const big = structuredClone(fixtureRows[2]!);
    big.prompt[big.prompt.length - 1]!.content = 'x'.repeat(50_000);
    big.chosen.content = 'line\n'.repeat(10_000);
    const b = new ReportBuilder({ source: 'x.jsonl', maxChars: 500 });
    b.add({ index: 0, pair: big, promptLength: big.prompt.length });
    const d = embedded(b.build()).det[0]!;
    const last = d.p[d.p.length - 1]!;
    expect((last[3] as string).length).toBe(500);
    expect(last[4]).toBe(49_500);
    expect(d.a.length).toBeLessThanOrEqual(8000);
    expect(d.ma).toBeGreaterThan(40_000);
    expect(capText('abc\ndef', 5)).toEqual(['abc', 4]); // at a line end when one is near
    expect(capText('abcdefgh', 5)).toEqual(['abcde', 3]);
  });

  it('cannot be broken out of by the data (</script>, <!--)', () => {
    const evil = structuredClone(fixtureRows[5]!);
    evil.chosen.content = '</script><script>window.__pwned = 1</script><!-- <b>';
    const b = new ReportBuilder({ source: '<evil>.jsonl' });
    b.add({ index: 0, pair: evil, promptLength: evil.prompt.length });
    const html = b.build();
    expect(html).not.toContain('window.__pwned = 1</script>');
    expect(html).toContain('&lt;evil&gt;.jsonl');
    expect(embedded(html).det[0]!.a).toContain('</script><script>window.__pwned');
  });

  it('reads parquet to the same page as JSONL', async () => {
    const pq = join(tmp, 'pairs.parquet');
    const sink = openPublishedSink(pq);
    for (const r of fixtureRows) await sink.write(r);
    await sink.close();
    const a = join(tmp, 'from-jsonl.html');
    const b = join(tmp, 'from-parquet.html');
    await runReport(PAIRS, opts(a, { stats: STATS }));
    await runReport(pq, opts(b, { stats: STATS }));
    const strip = (s: string) => s.replace(/pairs\.(jsonl|parquet)/g, 'pairs');
    expect(strip(readFileSync(b, 'utf8'))).toBe(strip(readFileSync(a, 'utf8')));
  });

  it('command errors: existing output, missing or bad stats, missing pairs', async () => {
    const program = new Command('divergence-mine').exitOverride();
    program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerReport(program);
    program.commands.forEach((c) => c.exitOverride());
    const run = async (args: string[]) => {
      try {
        await program.parseAsync(['node', 'divergence-mine', 'report', ...args]);
      } catch (e) {
        return e;
      }
      return null;
    };
    const out = join(tmp, 'cli.html');
    expect(await run([PAIRS, '-o', out, '--stats', STATS, '--quiet'])).toBeNull();
    expect(existsSync(out)).toBe(true);
    const exists = (await run([PAIRS, '-o', out, '--quiet'])) as UserError;
    expect(exists).toBeInstanceOf(UserError);
    expect(exists.exitCode).toBe(8);
    expect(await run([PAIRS, '-o', out, '--quiet', '--force'])).toBeNull();
    expect(((await run([PAIRS, '-o', join(tmp, 'x.html'), '--stats', join(tmp, 'none.json')])) as UserError).exitCode).toBe(3);
    const badStats = join(tmp, 'bad-stats.json');
    writeFileSync(badStats, JSON.stringify({ counters: { pairs_emitted: 'six' } }));
    expect(((await run([PAIRS, '-o', join(tmp, 'x.html'), '--stats', badStats])) as UserError).exitCode).toBe(6);
    expect(() => readStats(PAIRS)).toThrow(/invalid JSON|not a stats file/);
    expect(((await run([join(tmp, 'none.jsonl'), '-o', join(tmp, 'x.html')])) as UserError).exitCode).toBe(3);
    expect(existsSync(join(tmp, 'x.html'))).toBe(false);
    expect(await run([PAIRS])).toBeTruthy(); // -o is required
  });
});

// ---------------------------------------------------------------------------------------- browser

const haveChromium = existsSync(CHROMIUM);
const inCI = Boolean(process.env.CI);
if (!haveChromium && !inCI) {
  console.warn(`report browser tests skipped: ${CHROMIUM} not found (apt-get install chromium); they always run in CI`);
}

describe.skipIf(!haveChromium && !inCI)('report in headless Chromium', () => {
  let ctx: BrowserContext;
  let profile: string;
  const errors: string[] = [];
  const requests: string[] = [];

  // Nothing here waits on a clock that load can outrun. A failed launch fails this hook, and a
  // failed hook fails the file with its 3 tests skipped (what one CI run showed); the launch had
  // Playwright's 30 s default inside a 60 s hook. Now the launch has no timeout of its own, a
  // browser that dies while starting is started again, and Playwright's actions wait as long as
  // the test may: the test timeouts are the only bounds, hang guards far above any load.
  beforeAll(async () => {
    const failures: string[] = [];
    for (let attempt = 1; attempt <= LAUNCH_ATTEMPTS && !ctx; attempt++) {
      profile = mkdtempSync(join(tmpdir(), 'dm-chromium-profile-'));
      try {
        ctx = await chromium.launchPersistentContext(profile, {
          executablePath: CHROMIUM,
          headless: true,
          args: CHROMIUM_FLAGS,
          viewport: { width: 1280, height: 900 },
          timeout: 0,
        });
      } catch (e) {
        failures.push(`attempt ${attempt}: ${(e as Error).message.split('\n')[0]}`);
        rmSync(profile, { recursive: true, force: true });
      }
    }
    if (!ctx) throw new Error(`${CHROMIUM} did not start (${failures.join('; ')})`);
    ctx.setDefaultTimeout(0);
    ctx.setDefaultNavigationTimeout(0);
  }, 600_000);

  afterAll(async () => {
    await ctx?.close();
    rmSync(profile, { recursive: true, force: true });
  }, 300_000);

  async function load(file: string, hash = ''): Promise<Page> {
    const page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('request', (r) => requests.push(r.url()));
    await page.goto('file://' + file + hash);
    await page.waitForSelector('body[data-ready="1"]');
    return page;
  }

  const visibleRows = (page: Page) => page.locator('#rows .tr');

  it('draws the charts, filters the table and opens a diff (fixture pairs)', async () => {
    const file = await buildFixtureReport('browser.html');
    const page = await load(file);

    // charts: every chart has bars with a real size on screen
    for (const id of ['funnel-chart', 'hist-turn', 'hist-sim', 'tools-chart', 'repos-chart']) {
      const box = await page.locator(`#${id}`).boundingBox();
      expect(box && box.width > 200 && box.height > 50, id).toBe(true);
      const bars = page.locator(`#${id} rect.bar`);
      expect(await bars.count(), id).toBeGreaterThan(0);
      const widths = await bars.evaluateAll((els) => els.map((e) => (e as SVGGraphicsElement).getBBox().width * (e as SVGGraphicsElement).getBBox().height));
      expect(widths.some((w) => w > 0), id).toBe(true);
    }
    expect(await page.locator('#funnel-chart .row').count()).toBe(11);
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });

    // table: all rows, then filtered by text, by tool, and sorted
    expect(await page.locator('#count').textContent()).toBe('6 pairs');
    expect(await visibleRows(page).count()).toBe(6);
    await page.fill('#q', 'numpydoc');
    await expect.poll(() => page.locator('#count').textContent(), POLL).toBe('2 of 6 pairs');
    expect(await visibleRows(page).locator('.td:nth-child(2)').allTextContents()).toEqual(['numpy__numpydoc-101', 'numpy__numpydoc-101']);
    await page.fill('#q', 'numpydoc finish');
    await expect.poll(() => page.locator('#count').textContent(), POLL).toBe('1 of 6 pairs');
    await page.fill('#q', '');
    await page.selectOption('#f-ct', { label: 'execute_bash' });
    await expect.poll(() => page.locator('#count').textContent(), POLL).toBe('2 of 6 pairs');
    expect(await visibleRows(page).locator('.td:first-child').allTextContents()).toEqual(['1', '5']);
    await page.selectOption('#f-ct', { label: 'any' });
    await page.click('.th[data-sort="sim"]');
    expect(await visibleRows(page).first().locator('.td:nth-child(6)').textContent()).toBe('0.033');
    await page.click('.th[data-sort="sim"]');
    expect(await visibleRows(page).first().locator('.td:nth-child(6)').textContent()).toBe('0.878');
    await page.click('.th[data-sort="row"]');

    // a click opens the side-by-side diff of that pair
    await visibleRows(page).nth(5).click();
    await expect.poll(() => page.locator('#detail').isVisible(), POLL).toBe(true);
    expect(await page.locator('#d-title').textContent()).toContain('tianocore__edk2-pytool-library-372');
    expect(await page.locator('#d-meta').textContent()).toBe('divergence turn 6 · message index 14 · action similarity 0.878 · prompt 14 messages');
    expect(await page.locator('#d-prompt .msg').count()).toBe(3);
    expect(await page.locator('#d-diff').getAttribute('data-layout')).toBe('side');
    expect(await page.locator('#d-diff mark.hl-a').allTextContents()).toEqual([' -v']);
    expect(await page.locator('#d-diff mark.hl-b').allTextContents()).toEqual(['test_path_utilities.py -x -q']);
    expect(page.url()).toMatch(/#pair=5$/);
    await page.screenshot({ path: join(ARTIFACTS, 'report-detail.png') });

    // prompt messages expand; arrows step; Esc closes
    const more = page.locator('#d-prompt button.more').first();
    const before = await page.locator('#d-prompt pre.msg-body').first().textContent();
    await more.click();
    expect((await page.locator('#d-prompt pre.msg-body').first().textContent())!.length).toBeGreaterThan(before!.length);
    await page.keyboard.press('ArrowLeft');
    expect(await page.locator('#d-title').textContent()).toContain('pair #4 ');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#detail').isVisible(), POLL).toBe(false);

    // pair 0 has folded unchanged lines; clicking the fold shows everything
    await visibleRows(page).first().press('Enter');
    await expect.poll(() => page.locator('#detail').isVisible(), POLL).toBe(true);
    expect(await page.locator('#d-diff tr.fold').count()).toBeGreaterThan(0);
    const linesBefore = await page.locator('#d-diff tr.line').count();
    await page.locator('#d-diff tr.fold').first().click();
    expect(await page.locator('#d-diff tr.fold').count()).toBe(0);
    expect(await page.locator('#d-diff tr.line').count()).toBeGreaterThan(linesBefore);
    await page.close();

    // deep link, and the stacked layout on a narrow window
    const narrow = await load(file, '#pair=3');
    await narrow.setViewportSize({ width: 600, height: 900 });
    await expect.poll(() => narrow.locator('#d-diff').getAttribute('data-layout'), POLL).toBe('stacked');
    expect(await narrow.locator('#d-title').textContent()).toContain('pair #3 ');
    expect(await narrow.locator('#d-diff .stack.b').textContent()).toContain('Excellent! All tests pass.');
    await narrow.close();

    expect(errors).toEqual([]);
    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
  }, 600_000);

  it('shows hostile text as text', async () => {
    const evil = structuredClone(fixtureRows[5]!);
    evil.chosen.content = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    const b = new ReportBuilder({ source: 'evil.jsonl' });
    b.add({ index: 0, pair: evil, promptLength: evil.prompt.length });
    const file = join(tmp, 'evil.html');
    writeFileSync(file, b.build());
    const page = await load(file, '#pair=0');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('#d-diff td.a').first().textContent()).toContain('</script><script>window.__pwned = 1');
    expect(await page.locator('img').count()).toBe(0);
    await page.close();
    expect(errors).toEqual([]);
  }, 600_000);

  // Build and page times belong in a benchmark; this checks what a 5,000-pair page shows and does.
  it('virtualises, filters, sorts and opens pairs with 5,000 pairs', async () => {
    const pairs = join(tmp, 'pairs-5000.jsonl');
    await writeSynthPairs(pairs, 5000, 11);
    const out = join(tmp, 'report-5000.html');
    await runReport(pairs, opts(out));
    const html = readFileSync(out, 'utf8');
    expect(html.length).toBeLessThan(40 * 1024 * 1024);
    const data = embedded(html);
    expect(data.n).toBe(5000);
    expect(data.det.every((d) => d.p.length <= 3)).toBe(true);

    const page = await load(out);
    // virtualised: a screenful of rows in the DOM, not 5,000
    const inDom = await visibleRows(page).count();
    expect(inDom).toBeGreaterThan(10);
    expect(inDom).toBeLessThan(100);
    expect(await page.locator('#count').textContent()).toBe('5000 pairs');

    // scrolling to the end renders the last rows
    await page.locator('#viewport').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => visibleRows(page).last().locator('.td:first-child').textContent(), POLL).toBe('4999');

    // filtering matches the data
    const repo = (data as unknown as { repos: string[] }).repos[0]!;
    const expected = (data.cols.repo as number[]).filter((r) => r === 0).length;
    await page.fill('#q', repo);
    await expect.poll(() => page.locator('#count').textContent(), POLL).toBe(`${expected} of 5000 pairs`);
    await page.fill('#q', '');
    await expect.poll(() => page.locator('#count').textContent(), POLL).toBe('5000 pairs');

    // sorting 5,000 rows, then opening a pair
    await page.click('.th[data-sort="turn"]');
    await page.click('.th[data-sort="turn"]');
    const maxTurn = Math.max(...(data.cols.turn as number[]));
    expect(await visibleRows(page).first().locator('.td:nth-child(4)').textContent()).toBe(String(maxTurn));
    await visibleRows(page).nth(2).click();
    await expect.poll(() => page.locator('#detail').isVisible(), POLL).toBe(true);
    expect(await page.locator('#d-diff table.sbs').count()).toBe(1);
    await page.keyboard.press('ArrowRight');
    await page.screenshot({ path: join(ARTIFACTS, 'report-5000-detail.png') });
    await page.keyboard.press('Escape');
    await page.screenshot({ path: join(ARTIFACTS, 'report-5000.png') });
    await page.close();
    expect(errors).toEqual([]);
  }, 900_000);
});

describe('report: streaming input', () => {
  it('reads the last prompt messages only when asked', async () => {
    const tails: number[] = [];
    for await (const r of readPairs(PAIRS, { promptTail: 2 })) {
      tails.push(r.pair.prompt.length);
      expect(r.promptLength).toBe(fixtureRows[r.index]!.prompt.length);
    }
    expect(tails).toEqual([2, 2, 2, 2, 2, 2]);
  });
});
