/**
 * An instant as whole epoch milliseconds plus whether it lies strictly inside that
 * millisecond. A double cannot hold both (1.7e12 ms with a 1e-4 fraction needs 17 digits),
 * and exclusive bounds against whole-millisecond timestamps need nothing more.
 */
export interface Instant {
    millis: number;
    /** True when digits past the millisecond are not all zero. */
    insideMillis: boolean;
}
/** Exclusive lower bound in whole milliseconds: t > instant exactly when t > bound. */
export declare function afterBound({ millis }: Instant): number;
/** Exclusive upper bound in whole milliseconds: t < instant exactly when t < bound. */
export declare function beforeBound({ millis, insideMillis }: Instant): number;
/** An ISO 8601 instant with a zone, or undefined if the text is not one. */
export declare function parseInstant(text: string): Instant | undefined;
