/** Filled in by the delegation work (issue #5). */
export const approvalRoutes = {} as const;
