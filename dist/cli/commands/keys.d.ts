import { type Io } from "../usage.js";
export declare function keysCommand(args: string[], io: Io): Promise<number>;
