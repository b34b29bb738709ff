// formsink under /forms in a Next.js App Router app (any framework with Fetch route handlers).
import { createSubmissionsHandler } from "formsink";
import { createLibsqlStore } from "formsink/libsql";

const store = await createLibsqlStore({ url: process.env.FORMSINK_DB ?? "file:formsink.db" });
const forms = createSubmissionsHandler(store, { basePath: "/forms" });

export { forms as GET, forms as POST, forms as PATCH, forms as DELETE, forms as OPTIONS };
