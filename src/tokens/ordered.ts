// Results that finish out of order, written in order: `push` queues a pending result with what to
// do with it, and waits only when `limit` results are queued (bounded memory); `drain` finishes the
// queue. Used by `mine --tokenizer` so that rows are counted in worker threads while the run goes on,
// and still written in the order the pipeline produced them.
export class OrderedQueue<T> {
  private readonly queue: { result: Promise<T>; then: (v: T) => Promise<void> }[] = [];

  constructor(private readonly limit = 64) {}

  async push(result: Promise<T>, then: (v: T) => Promise<void>): Promise<void> {
    result.catch(() => undefined); // rejections surface in order, through the queue
    this.queue.push({ result, then });
    if (this.queue.length >= this.limit) await this.step();
  }

  private async step(): Promise<void> {
    const e = this.queue.shift();
    if (!e) return;
    await e.then(await e.result);
  }

  async drain(): Promise<void> {
    while (this.queue.length > 0) await this.step();
  }
}
