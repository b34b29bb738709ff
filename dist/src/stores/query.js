export function matchesFilter(submission, filter) {
    if (filter.popupId !== undefined && submission.popupId !== filter.popupId)
        return false;
    if (filter.domain !== undefined && submission.domain !== filter.domain)
        return false;
    if (filter.device !== undefined && submission.device !== filter.device)
        return false;
    if (filter.status !== undefined && submission.status !== filter.status)
        return false;
    const created = Date.parse(submission.createdAt);
    if (filter.createdAfter !== undefined && !(created > filter.createdAfter))
        return false;
    if (filter.createdBefore !== undefined && !(created < filter.createdBefore))
        return false;
    return true;
}
/** Ascending by creation time, ties broken by id: the one total order of every list. */
export function compareSubmissions(a, b) {
    const byTime = Date.parse(a.createdAt) - Date.parse(b.createdAt);
    if (byTime !== 0)
        return byTime;
    return a.submissionId < b.submissionId ? -1 : a.submissionId > b.submissionId ? 1 : 0;
}
