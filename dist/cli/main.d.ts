import { type Io } from "./usage.js";
/** Runs the command line `args` and returns the exit code; everything for people goes to stderr. */
export declare function main(args: string[], io?: Io): Promise<number>;
