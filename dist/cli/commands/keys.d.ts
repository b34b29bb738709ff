import { type Io } from "../usage.ts";
export declare function keysCommand(args: string[], io: Io): Promise<number>;
