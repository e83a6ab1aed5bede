// A string value handed over undecoded: its UTF-8 bytes, checked to be UTF-8 and copied out of the
// page. A caller that only passes a long string on (the miner spills a tool result's content as its
// UTF-8) would otherwise pay for decoding it and encoding it again, which for text holding one
// non-ASCII character runs at about 250 and 650 MB/s on Node 20, against a copy at 10 GB/s.
// readRows hands a leaf's strings over this way only when its caller asks for it (ReadOptions).
export class Utf8Bytes {
  constructor(readonly bytes: Buffer) {}

  /** The string itself (valid UTF-8 decodes and encodes back to these very bytes). */
  text(): string {
    return this.bytes.toString('utf8');
  }
}
