import { createReadStream } from "node:fs";
import { TextDecoder } from "node:util";
import { CommandError, messageOf } from "./usage.ts";

/**
 * A file's text in chunks, decoded as UTF-8 strictly: bytes that are not UTF-8 stop the read
 * with an error naming the file, rather than turning into U+FFFD in the data.
 */
export async function* readTextFile(path: string): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let offset = 0;
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      yield decode(decoder, chunk, path, offset);
      offset += chunk.byteLength;
    }
    yield decode(decoder, undefined, path, offset);
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError(`cannot read ${path}: ${messageOf(error)}`);
  }
}

function decode(decoder: TextDecoder, chunk: Buffer | undefined, path: string, offset: number): string {
  try {
    return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
  } catch {
    throw new CommandError(`${path} is not UTF-8 text (somewhere after byte ${offset}); save it as UTF-8 and try again`);
  }
}
