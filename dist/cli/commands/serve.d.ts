import { type Io } from "../usage.js";
export declare function serveCommand(args: string[], io: Io): Promise<number>;
