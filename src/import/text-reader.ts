/** Text chunks cut into the units the import formats are made of, each with its line number. */

export interface NumberedText {
  line: number;
  text: string;
}

/** The chunks without a leading byte order mark, as spreadsheets and editors add when they save UTF-8. */
export async function* withoutByteOrderMark(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let first = true;
  for await (const chunk of chunks) {
    if (first && chunk !== "") {
      first = false;
      if (chunk.startsWith("\uFEFF")) {
        yield chunk.slice(1);
        continue;
      }
    }
    yield chunk;
  }
}

/** The lines of the text (LF or CRLF), without their line ends; blank lines are skipped. */
export async function* readLines(chunks: AsyncIterable<string>): AsyncGenerator<NumberedText> {
  let rest = "";
  let line = 1;
  for await (const chunk of withoutByteOrderMark(chunks)) {
    rest += chunk;
    let start = 0;
    for (let end = rest.indexOf("\n"); end >= 0; end = rest.indexOf("\n", start)) {
      const text = rest.slice(start, rest[end - 1] === "\r" ? end - 1 : end);
      if (text.trim() !== "") yield { line, text };
      line++;
      start = end + 1;
    }
    rest = rest.slice(start);
  }
  if (rest.trim() !== "") yield { line, text: rest };
}

/**
 * The top-level JSON values of a text that holds one or more of them one after another (pages
 * saved with `curl ... >> pages.json`), each with the line it starts on. Only brackets and
 * strings are followed here; each value is then parsed whole by JSON.parse. A value longer
 * than `maxLength` is an error rather than a memory hog.
 */
export async function* readJsonValues(chunks: AsyncIterable<string>, maxLength: number): AsyncGenerator<NumberedText | { line: number; error: string }> {
  let value = "";
  let depth = 0;
  let inString = false;
  let escaped = false;
  let line = 1;
  let valueLine = 1;
  for await (const chunk of withoutByteOrderMark(chunks)) {
    let start = depth > 0 ? 0 : -1; // where the part of `chunk` that belongs to `value` starts
    for (let i = 0; i < chunk.length; i++) {
      const char = chunk[i]!;
      if (char === "\n") line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (char === "\\") escaped = true;
        else if (char === '"') inString = false;
        continue;
      }
      if (depth === 0) {
        if (char === " " || char === "\t" || char === "\r" || char === "\n") continue;
        if (char !== "{" && char !== "[") {
          yield { line, error: `expected a JSON object (a saved list page), found "${char}"` };
          return;
        }
        start = i;
        valueLine = line;
      }
      if (char === '"') inString = true;
      else if (char === "{" || char === "[") depth++;
      else if (char === "}" || char === "]") {
        depth--;
        if (depth === 0) {
          yield { line: valueLine, text: value + chunk.slice(start, i + 1) };
          value = "";
          start = -1;
        }
      }
    }
    if (start >= 0) value += chunk.slice(start);
    if (value.length > maxLength) {
      yield { line: valueLine, error: `a JSON value longer than ${maxLength} characters` };
      return;
    }
  }
  if (depth > 0 || inString) yield { line: valueLine, error: "the JSON value that starts here is cut off at the end of the file" };
}
