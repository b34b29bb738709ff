import { HttpError } from "./errors.js";
/**
 * The known query parameters of a URL as single strings. A known parameter given twice is
 * refused (which one would win is a guess); unknown ones are ignored, as the contract says.
 */
export function singleValuedQuery(url, known) {
    const query = {};
    for (const name of known) {
        const values = url.searchParams.getAll(name);
        if (values.length > 1)
            throw new HttpError(400, `Query parameter ${name} must be given at most once`);
        if (values.length === 1)
            query[name] = values[0];
    }
    return query;
}
