/** The principal an access step established; a route without one is a wiring mistake. */
export function principalOf(context) {
    if (!context.principal)
        throw new Error("route reached without an access step");
    return context.principal;
}
