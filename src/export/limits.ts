/**
 * More distinct data keys than this make a CSV no spreadsheet can use; NDJSON has no limit. Its
 * own module: the route table names it without loading the exporter (src/handler.ts).
 */
export const MAX_CSV_DATA_COLUMNS = 1000;
