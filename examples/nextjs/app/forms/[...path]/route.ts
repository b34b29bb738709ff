// formsink under /forms in a Next.js App Router app (any framework with Fetch route handlers).
import { createSubmissionsHandler, forwardedForAddress } from "formsink";
import { createLibsqlStore } from "formsink/libsql";

const store = await createLibsqlStore({ url: process.env.FORMSINK_DB ?? "file:formsink.db" });
const handler = createSubmissionsHandler(store, {
  basePath: "/forms",
  // A route handler sees no socket. Behind exactly one reverse proxy that appends the address it
  // saw to X-Forwarded-For (Vercel, or `next start` behind nginx), that entry is the client; an
  // app reached directly must not use this: a client can write the header itself.
  clientAddress: forwardedForAddress(1),
});

// Next.js calls route handlers with (request, { params }): only the request goes on.
const forms = (request: Request) => handler(request);

export { forms as GET, forms as POST, forms as PATCH, forms as DELETE, forms as OPTIONS };
