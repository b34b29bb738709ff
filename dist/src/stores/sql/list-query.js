export const SUBMISSION_COLUMNS = "id, popup_id, domain, device, user_agent, status, created_at, data";
const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" };
export function listStatements(accountId, query) {
    const conditions = ["account_id = ?"];
    const args = [accountId];
    for (const [field, column] of Object.entries(EQUALITY_COLUMNS)) {
        const value = query[field];
        if (value === undefined)
            continue;
        conditions.push(`${column} = ?`);
        args.push(value);
    }
    if (query.createdAfter !== undefined) {
        conditions.push("created_at > ?");
        args.push(query.createdAfter);
    }
    if (query.createdBefore !== undefined) {
        conditions.push("created_at < ?");
        args.push(query.createdBefore);
    }
    const where = conditions.join(" AND ");
    const direction = query.order === "asc" ? "ASC" : "DESC";
    return {
        page: {
            sql: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where}
            ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ?`,
            args: [...args, query.limit, query.offset],
        },
        count: { sql: `SELECT COUNT(*) AS total FROM submissions WHERE ${where}`, args },
    };
}
