/**
 * The known query parameters of a URL as single strings. A known parameter given twice is
 * refused (which one would win is a guess); unknown ones are ignored, as the contract says.
 */
export declare function singleValuedQuery(url: URL, known: readonly string[]): Record<string, string>;
