/**
 * String lengths in code points, as JSON Schema's `minLength`/`maxLength` count them (RFC 8259
 * characters; JSON Schema Validation 6.3.1). arktype's length bounds count UTF-16 code units, so
 * a limit of 256 would refuse 129 emoji that every generated validator lets through.
 */
import { type Traversal, type Type, type } from "arktype";
import { codePointLength } from "./code-point-length.ts";

/** The JSON Schema bounds a `characters` check stands for: `src/openapi.ts` writes them out. */
export interface LengthBounds {
  minLength?: number;
  maxLength?: number;
}

const BOUNDS = Symbol("lengthBounds");

/** A string of `min` to `max` code points. */
export function characters(min: number, max: number): Type<string> {
  const bounds: LengthBounds = min > 0 ? { minLength: min, maxLength: max } : { maxLength: max };
  const expected = min > 0 ? `${min} to ${max} characters long` : `at most ${max} characters long`;
  const check = (text: string, ctx: Traversal): boolean => {
    // Code points lie between half the code units and all of them: most strings need no count.
    if (text.length >= 2 * min && text.length <= max) return true;
    const length = codePointLength(text);
    return (length >= min && length <= max) || ctx.reject({ expected, actual: String(length) });
  };
  // arktype registers a predicate under its function's name, numbered from the second on
  // ("check", "check1", ...), and a name already taken by another function is overwritten: in a
  // minified bundle (the single binary) these closures' short name numbered could be another
  // predicate's own name, which then checked the wrong field. A long name no minifier gives.
  Object.defineProperty(check, "name", { value: "codePointLengthWithinBounds" });
  return type.string.narrow(Object.assign(check, { [BOUNDS]: bounds }));
}

/** The bounds of a `characters` check, or undefined for any other predicate. */
export function lengthBoundsOf(predicate: unknown): LengthBounds | undefined {
  return (predicate as { [BOUNDS]?: LengthBounds })[BOUNDS];
}
