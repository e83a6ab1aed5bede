// The golden outputs of `divergence-mine show` on test/data/pairs.jsonl: file name -> CLI arguments.
// test/show.test.ts compares with test/golden/<file>; only test/support/update-golden.mjs (`npm run golden`)
// writes them, never a test run.
export const SHOW_GOLDEN = [
  ...[0, 1, 2, 3, 4, 5].map((i) => ({ file: `show-${i}.txt`, args: ['--index', String(i), '--width', '100'] })),
  { file: 'show-5-stacked-60.txt', args: ['--index', '5', '--width', '60'] },
  { file: 'show-0-full-120.txt', args: ['--index', '0', '--width', '120', '--full', '--context', '1'] },
];
