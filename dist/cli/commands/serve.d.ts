import { type Io } from "../usage.ts";
export declare function serveCommand(args: string[], io: Io): Promise<number>;
