import type { SubmissionStore } from "../store.js";
import type { Authenticate } from "./principal.js";
/** Authenticates against the keys in the store; revocation is seen on the very next request. */
export declare function authenticateWithStore(store: SubmissionStore): Authenticate;
