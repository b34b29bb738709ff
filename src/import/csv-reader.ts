/**
 * A streaming RFC 4180 reader: text chunks in, one row of cells at a time out, each with the
 * line it starts on. Quoted fields may hold commas, quotes (doubled) and line breaks. A row
 * that breaks the rules (a quote inside an unquoted field, text after a closing quote, a quote
 * never closed) comes out as an error for its line, and reading goes on at the next line.
 * Blank lines are skipped.
 */
import { withoutByteOrderMark } from "./text-reader.ts";

export type CsvRow = { line: number; cells: string[] } | { line: number; error: string };

export async function* readCsvRows(chunks: AsyncIterable<string>): AsyncGenerator<CsvRow> {
  let cells: string[] = [];
  let cell = "";
  let state: "start" | "unquoted" | "quoted" | "quote in quoted" | "skipping" = "start";
  let line = 1; // the line the current character is on
  let rowLine = 1; // the line the current row started on
  let quoteLine = 1;
  let lastWasCR = false;

  const endRow = (): CsvRow => {
    cells.push(cell);
    const row = { line: rowLine, cells };
    cells = [];
    cell = "";
    return row;
  };
  /** The error for the current row, whose cells are dropped; the caller skips the rest of its line. */
  const fail = (error: string): CsvRow => {
    cells = [];
    cell = "";
    return { line: rowLine, error };
  };

  for await (const chunk of withoutByteOrderMark(chunks)) {
    let plainStart = -1; // start of a run of ordinary characters, appended to `cell` at once
    for (let i = 0; i < chunk.length; i++) {
      const char = chunk[i]!;
      const newline = char === "\n" && !lastWasCR;
      lastWasCR = char === "\r";
      if (state === "quoted") {
        if (char === '"') {
          if (plainStart >= 0) cell += chunk.slice(plainStart, i);
          plainStart = -1;
          state = "quote in quoted";
        } else {
          if (plainStart < 0) plainStart = i;
          if (newline || char === "\r") line++;
        }
        continue;
      }
      if (state === "unquoted" && char !== "," && char !== "\r" && char !== "\n" && char !== '"') {
        if (plainStart < 0) plainStart = i;
        continue;
      }
      if (plainStart >= 0) {
        cell += chunk.slice(plainStart, i);
        plainStart = -1;
      }
      if (state === "skipping") {
        if (char === "\r" || newline) {
          line++;
          rowLine = line;
          state = "start";
        }
        continue;
      }
      if (state === "quote in quoted") {
        if (char === '"') {
          cell += '"';
          state = "quoted";
          continue;
        }
        if (char !== "," && char !== "\r" && char !== "\n") {
          state = "skipping";
          yield fail(`text after the closing quote of a field (line ${line})`);
          continue;
        }
        state = "unquoted"; // the field is complete; what follows is a separator
      }
      // state is "start" (of a field) or "unquoted"
      if (char === ",") {
        cells.push(cell);
        cell = "";
        state = "start";
      } else if (char === "\r" || char === "\n") {
        if (char === "\n" && !newline) continue; // the LF of a CRLF
        line++;
        if (cells.length > 0 || cell !== "" || state !== "start") yield endRow();
        rowLine = line;
        state = "start";
      } else if (char === '"') {
        if (state === "start" && cell === "") {
          state = "quoted";
          quoteLine = line;
        } else {
          state = "skipping";
          yield fail(`a quote inside a field that does not start with one (line ${line}); quote the whole field and double the quote`);
        }
      } else {
        cell += char;
        state = "unquoted";
      }
    }
    if (plainStart >= 0) cell += chunk.slice(plainStart);
  }
  if (state === "quoted") {
    state = "skipping";
    yield fail(`a quoted field that starts on line ${quoteLine} is never closed`);
  } else if (state !== "skipping" && (state !== "start" || cells.length > 0 || cell !== "")) {
    yield endRow();
  }
}
