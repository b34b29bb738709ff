import type { SubmissionStore } from "../store.ts";
import type { Authenticate } from "./principal.ts";
/** Authenticates against the keys in the store; revocation is seen on the very next request. */
export declare function authenticateWithStore(store: SubmissionStore): Authenticate;
