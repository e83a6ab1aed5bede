// Numbers for people, as `en-US` writes them: 12,345 and 1,234.568. Every run prints counts, and the
// first use of `Intl` (loading ICU's locale data) costs 30-50 ms of a process's start-up, more than
// a small file's whole index pass; so the integers every count is are grouped here by hand, and only
// other values (fractions, -0, past 2^53, NaN, infinities) go to `Intl`, made on their first use.
// Same text as `n.toLocaleString('en-US')` for every number (test/count-text.test.ts).

let intl: Intl.NumberFormat | null = null;

export function formatCount(n: number): string {
  if (Number.isSafeInteger(n) && !Object.is(n, -0)) {
    const digits = String(n < 0 ? -n : n).replace(/\B(?=(\d{3})+$)/g, ',');
    return n < 0 ? `-${digits}` : digits;
  }
  return (intl ??= new Intl.NumberFormat('en-US')).format(n);
}
